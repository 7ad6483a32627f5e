package store

import "testing"

func TestUserPersonaSummary(t *testing.T) {
	for _, tc := range []struct {
		p    *UserPersona
		want string
	}{
		{nil, NoPersona},
		{&UserPersona{UserID: "1"}, NoPersona},
		{&UserPersona{PreferredName: "Sam"}, "goes by Sam"},
		{&UserPersona{PreferredName: "Sam", Pronouns: "they/them", Description: "plays bass"}, "goes by Sam; pronouns they/them; about: plays bass"},
		{&UserPersona{Description: "plays bass"}, "about: plays bass"},
	} {
		if got := tc.p.Summary(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
