package voice

import "testing"

func TestShapeOf(t *testing.T) {
	cases := map[string]turnShape{
		"banter, what time is it?":             shapeComplete,
		"hey banter, what's the weather like?": shapeComplete, // a question may end on a preposition
		"where are you from?":                  shapeComplete,
		"Banter.":                              shapeComplete,
		"That was great!":                      shapeComplete,
		"I love you.":                          shapeComplete,
		"so I was thinking that…":              shapeTrailing,
		"so I was thinking that...":            shapeTrailing,
		"so I was thinking that":               shapeTrailing,
		"so I was thinking that.":              shapeTrailing, // a transcriber's period after trailing speech
		"and then the":                         shapeTrailing,
		"I went there with my":                 shapeTrailing,
		"well, um":                             shapeTrailing,
		"we could go, but":                     shapeTrailing,
		"banter, listen,":                      shapeTrailing,
		"the thing is -":                       shapeTrailing,
		"banter what time is it":               shapeOpen,
		"":                                     shapeOpen,
		"   ":                                  shapeOpen,
	}
	for text, want := range cases {
		if got := shapeOf(text); got != want {
			t.Errorf("shapeOf(%q) = %v, want %v", text, got, want)
		}
	}
}

// FuzzShapeOf: any transcript has a shape (no panic); one that ends in an ellipsis trails off,
// one that ends in a question is complete.
func FuzzShapeOf(f *testing.F) {
	for _, s := range []string{"banter, what time is it?", "so I was thinking that", "and then the.", "", "?", "…", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_ = shapeOf(text)
		if got := shapeOf(text + " and then..."); got != shapeTrailing {
			t.Errorf("%q + ellipsis: %v", text, got)
		}
		if got := shapeOf(text + " right?"); got != shapeComplete {
			t.Errorf("%q + question: %v", text, got)
		}
	})
}
