package openaisim

import (
	"strings"
	"testing"

	"google.golang.org/genai"
)

// banterSpeak is how banter's brain strategy has a realtime model voice its reply
// (voice/realtime speakPrompt), copied here: the simulator must not import banter.
const banterSpeak = "Read the text below aloud exactly as written, in your usual voice and tone. " +
	"Do not add, drop or change any words, and say nothing else.\n\nText:\n"

func TestReadAloud(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
		ok                bool
	}{
		{"banter's prompt", banterSpeak + "Sam, it is sunny today.", "Sam, it is sunny today.", true},
		{"several lines", banterSpeak + "First line.\nSecond line.\n", "First line.\nSecond line.", true},
		{"on the marker's line, quoted", "Please say this out loud, word for word.\nText: \"Good night, all.\"", "Good night, all.", true},
		{"the last marker", "Repeat exactly the text below.\nText: the word Text: appears\nText: this one", "this one", true},
		{"no marker", "Read this aloud exactly: hello", "", false},
		{"a marker and nothing to say", banterSpeak + "  \n", "", false},
		{"a marker, no instruction to voice it", "Summarise this.\nText:\nlong story", "", false},
		{"the instruction after the marker", "Text:\nhello\nread it aloud", "", false},
		{"a plain question", "what's the weather like today?", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := readAloud(tc.input)
			if got != tc.want || ok != tc.ok {
				t.Errorf("readAloud(%q) = %q, %v; want %q, %v", tc.input, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzReadAloud: any input is either not a request to voice text, or yields non-empty text
// taken from the input.
func FuzzReadAloud(f *testing.F) {
	for _, s := range []string{banterSpeak + "hi", "say it aloud\ntext:", "Text:\nx", "read verbatim\nTEXT: “x”", "\"", "say aloud\ntext:\"\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		got, ok := readAloud(input)
		if ok != (got != "") {
			t.Fatalf("readAloud(%q) = %q, %v", input, got, ok)
		}
		if ok && !strings.Contains(input, got) {
			t.Fatalf("readAloud(%q) = %q: not from the input", input, got)
		}
	})
}

// TestGeminiSpeaksTheTextItIsAskedToRead: with no rule for it, a user text turn asking the model
// to read text aloud (banter's brain strategy) is answered as a real Live model answers it: the
// audio and the output transcription are the text, not the instruction around it (the simulator
// used to echo the whole request, "You said: Read the text below aloud…": 12 s of speech for
// these six words). Other turns keep the echo; a text session writes the text.
func TestGeminiSpeaksTheTextItIsAskedToRead(t *testing.T) {
	const say = "Sam, it looks sunny all afternoon."
	for _, tc := range []struct {
		name, turn, want string
		textOut          bool
	}{
		{"read aloud", banterSpeak + say, say, false},
		{"read aloud, text session", banterSpeak + say, say, true},
		{"a plain turn", "what's the weather like today?", "You said: what's the weather like today?", false},
		{"nothing to read", banterSpeak, "You said: " + strings.TrimSpace(banterSpeak), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t)
			cfg := liveConfig("")
			if tc.textOut {
				cfg.ResponseModalities, cfg.OutputAudioTranscription, cfg.SpeechConfig = []genai.Modality{genai.ModalityText}, nil, nil
			}
			sess, msgs := genaiLive(t, s, cfg)
			next(t, msgs) // setupComplete
			next(t, msgs) // the first resumption handle
			if err := sess.SendClientContent(genai.LiveClientContentInput{Turns: []*genai.Content{genai.NewContentFromText(tc.turn, genai.RoleUser)}}); err != nil {
				t.Fatal(err)
			}
			h := untilTurnComplete(t, msgs, true)
			if tc.textOut {
				if h.text != tc.want || h.audio != 0 {
					t.Errorf("text %q and %d bytes of audio, want the text %q", h.text, h.audio, tc.want)
				}
				return
			}
			if h.output != tc.want {
				t.Errorf("said %q, want %q", h.output, tc.want)
			}
			if want := len(Synthesize(tc.want, "Kore", 1)); h.audio != want {
				t.Errorf("%d bytes of audio, want %d (the speech of %q)", h.audio, want, tc.want)
			}
		})
	}
}

// TestRealtimeSpeaksTheTextItIsAskedToRead: on the OpenAI face too, with no rule, a
// response.create whose own instructions ask for text to be read aloud (banter's brain strategy
// on the Realtime API) says that text; a response without them keeps the default.
func TestRealtimeSpeaksTheTextItIsAskedToRead(t *testing.T) {
	const say = "Sam, it looks sunny all afternoon."
	for _, tc := range []struct {
		name, instructions, want string
	}{
		{"read aloud", banterSpeak + say, say},
		{"other instructions", "Answer briefly.", "Hello from the OpenAI simulator."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRT(t, serve(t), "gpt-realtime")
			c.send(noVAD())
			c.until("session.updated")
			c.send(map[string]any{"type": "response.create", "response": map[string]any{"instructions": tc.instructions}})
			transcript, audio := collect(t, c.until("response.done"))
			if transcript != tc.want {
				t.Errorf("said %q, want %q", transcript, tc.want)
			}
			if want := len(Synthesize(tc.want, "", 1)); len(audio) != want {
				t.Errorf("%d bytes of audio, want %d", len(audio), want)
			}
		})
	}
}
