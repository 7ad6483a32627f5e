package conform

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBitSetAsDecimalString: default_member_permissions is taken as the integer the spec
// writes and as the decimal string Discord documents and its libraries send, within the
// spec's bounds (0 to 2^54-1) either way; anything else is refused.
func TestBitSetAsDecimalString(t *testing.T) {
	d, err := Discord()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, value string // the JSON value of default_member_permissions
		ok          bool
	}{
		{"decimal string", `"32"`, true},
		{"integer", `32`, true},
		{"null", `null`, true},
		{"zero string (admins only)", `"0"`, true},
		{"maximum string", `"18014398509481983"`, true},
		{"maximum integer", `18014398509481983`, true},
		{"string above the maximum", `"18014398509481984"`, false},
		{"integer above the maximum", `18014398509481984`, false},
		{"string far above", `"99999999999999999999"`, false},
		{"negative string", `"-32"`, false},
		{"negative integer", `-32`, false},
		{"not a number", `"manage_guild"`, false},
		{"empty string", `""`, false},
		{"leading zero", `"032"`, false},
		{"plus sign", `"+32"`, false},
		{"exponent", `"3e1"`, false},
		{"space", `" 32"`, false},
		{"hex", `"0x20"`, false},
		{"boolean", `true`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"name":"spend","description":"today's spend","default_member_permissions":` + tt.value + `}`
			for _, req := range []struct{ method, path, body string }{
				{"POST", "/api/v10/applications/1/commands", body},
				{"PUT", "/api/v10/applications/1/commands", "[" + body + "]"},
				{"POST", "/api/v10/applications/1/guilds/2/commands", body},
			} {
				err := d.Request(req.method, req.path, []byte(req.body))
				if (err == nil) != tt.ok {
					t.Errorf("%s %s: err = %v, want ok=%v", req.method, req.path, err, tt.ok)
				}
				if err != nil && !strings.Contains(err.Error(), "default_member_permissions") {
					t.Errorf("%s %s: error %v does not name the field", req.method, req.path, err)
				}
			}
		})
	}
}

// TestBitSetNotWidenedWhereTheSpecChanged: a bit-set property that is not a bounded
// non-negative integer is an error, not loosened.
func TestBitSetNotWidenedWhereTheSpecChanged(t *testing.T) {
	for _, sc := range []map[string]any{
		{"type": "string"},
		{"type": []any{"integer", "null"}, "minimum": "0"},
		{"type": "integer", "minimum": "-1", "maximum": "10"},
		{"anyOf": []any{map[string]any{"type": "integer"}}},
	} {
		doc := map[string]any{"properties": map[string]any{"default_member_permissions": sc}}
		if err := bitSetsAsDecimalStrings(doc); err == nil {
			t.Errorf("%v widened", sc)
		}
	}
}

// decimalMaxima are the bounds the pattern is checked at: the spec's, powers of ten and
// their neighbours, single digits, and numbers with zeros and nines inside.
var decimalMaxima = []uint64{0, 1, 5, 9, 10, 11, 19, 20, 99, 100, 101, 909, 1000, 4090, 18014398509481983, 1<<64 - 1}

// TestDecimalPattern: for each bound, the pattern matches the decimal spelling of exactly
// the numbers up to it, around every digit boundary.
func TestDecimalPattern(t *testing.T) {
	for _, max := range decimalMaxima {
		re := regexp.MustCompile(decimalPattern(max))
		probe := []uint64{0, 1, max, max + 1, max - 1, max / 10, max * 10, max + 10}
		for p := uint64(1); p < 1e19; p *= 10 {
			probe = append(probe, p-1, p, p+1, max-p, max+p)
		}
		for _, n := range probe {
			if got, want := re.MatchString(strconv.FormatUint(n, 10)), n <= max; got != want {
				t.Errorf("max %d: %d matched=%v, want %v (pattern %s)", max, n, got, want, re)
			}
		}
	}
}

// FuzzDecimalPattern: the pattern for a bound matches a string exactly when it is the
// canonical decimal spelling of a number not above the bound.
func FuzzDecimalPattern(f *testing.F) {
	for _, s := range []string{"0", "32", "18014398509481983", "18014398509481984", "-1", "007", "+5", "1e3", " 1", "", "٣"} {
		f.Add(s, uint64(18014398509481983))
	}
	for _, max := range decimalMaxima {
		f.Add(strconv.FormatUint(max, 10), max)
	}
	f.Fuzz(func(t *testing.T, s string, max uint64) {
		n, err := strconv.ParseUint(s, 10, 64)
		want := err == nil && strconv.FormatUint(n, 10) == s && n <= max
		if got := regexp.MustCompile(decimalPattern(max)).MatchString(s); got != want {
			t.Errorf("max %d: %q matched=%v, want %v", max, s, got, want)
		}
	})
}
