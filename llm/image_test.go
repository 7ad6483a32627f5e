package llm

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// pngHeader is enough of a PNG for the simulator's data-URL check (the bytes are not decoded).
var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// TestGenerateWithImages: a user message's images reach the API as image inputs after its text
// (Responses input_image, chat image_url), inline bytes as a data URL and URLs as given; an
// assistant message never carries images.
func TestGenerateWithImages(t *testing.T) {
	const cdn = "https://cdn.discordapp.com/attachments/1/2/cat.png?ex=1&is=2&hm=3"
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngHeader)
	for _, api := range []API{APIResponses, APIChatCompletions} {
		t.Run(api.String(), func(t *testing.T) {
			env := newEnv(t, Options{API: api})
			req := GenerateRequest{Model: "gpt-5-mini", Instructions: "be brief", Messages: []Message{
				{Role: RoleUser, Content: "alice: look at my cat", Images: []Image{{Data: pngHeader, MIMEType: "image/png"}}},
				{Role: RoleAssistant, Content: "cute!", Images: []Image{{URL: cdn}}},
				{Role: RoleUser, Content: "bob: and mine", Images: []Image{{URL: cdn}}},
			}}
			if _, err := env.client.Generate(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			recs := env.sim.Requests()
			if len(recs) != 1 {
				t.Fatalf("%d requests", len(recs))
			}
			if want := []string{dataURL, cdn}; !slices.Equal(recs[0].Images, want) {
				t.Errorf("images = %q, want %q", recs[0].Images, want)
			}
			if !strings.Contains(recs[0].Prompt, "user: alice: look at my cat [image]") {
				t.Errorf("the image does not follow its text:\n%s", recs[0].Prompt)
			}
		})
	}
}

// TestSimulatorRefusesBadImages: the simulator, like the API, refuses an image part without a
// URL or with a URL that is neither http(s) nor an image data URL.
func TestSimulatorRefusesBadImages(t *testing.T) {
	env := newEnv(t, Options{API: APIResponses, MaxRetries: -1})
	for _, im := range []Image{{URL: "ftp://example.com/x.png"}, {Data: []byte("x"), MIMEType: "text/plain"}} {
		_, err := env.client.Generate(context.Background(), GenerateRequest{Model: "gpt-5-mini",
			Messages: []Message{{Role: RoleUser, Content: "see", Images: []Image{im}}}})
		if err == nil || !strings.Contains(err.Error(), "image_url") {
			t.Errorf("image %+v: err = %v, want a 400 naming image_url", im, err)
		}
	}
}
