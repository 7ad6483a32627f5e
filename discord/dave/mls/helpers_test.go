package mls

import (
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hexb is a hex-encoded byte string in the test vectors.
type hexb []byte

func (h *hexb) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil {
		*h = nil
		return nil
	}
	v, err := hex.DecodeString(*s)
	if err != nil {
		return err
	}
	*h = v
	return nil
}

func loadVectors(t testing.TB, name string, v any) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dec *json.Decoder
	if strings.HasSuffix(name, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		dec = json.NewDecoder(zr)
	} else {
		dec = json.NewDecoder(f)
	}
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func eq(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if string(got) != string(want) {
		t.Errorf("%s:\n got %x\nwant %x", what, got, want)
	}
}
