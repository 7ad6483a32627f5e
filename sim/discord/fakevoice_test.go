package discordsim

import (
	"slices"
	"sync"
	"testing"
)

// fakeVoice is a VoiceBackend that records grants and revocations.
type fakeVoice struct {
	endpoint string

	mu       sync.Mutex // guards following
	grantLog []VoiceGrant
	revokes  []UserID
	revoke   chan struct{} // closed and replaced at each revocation
}

func (f *fakeVoice) Endpoint() string { return f.endpoint }

func (f *fakeVoice) Authorize(g VoiceGrant) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.grantLog = append(f.grantLog, g)
	return nil
}

func (f *fakeVoice) Revoke(_ GuildID, u UserID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revokes = append(f.revokes, u)
	if f.revoke != nil {
		close(f.revoke)
	}
	f.revoke = make(chan struct{})
}

func (f *fakeVoice) grants() []VoiceGrant {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.grantLog)
}

func (f *fakeVoice) revoked() []UserID {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.revokes)
}

// awaitRevoked returns the revocations once there are at least n. The server
// sends a leave's VOICE_STATE_UPDATE before it revokes the voice session, so a
// test that has read the event waits here for the revocation.
func (f *fakeVoice) awaitRevoked(t *testing.T, n int) []UserID {
	t.Helper()
	ctx := testCtx(t)
	for {
		f.mu.Lock()
		if len(f.revokes) >= n {
			got := slices.Clone(f.revokes)
			f.mu.Unlock()
			return got
		}
		if f.revoke == nil {
			f.revoke = make(chan struct{})
		}
		next := f.revoke
		f.mu.Unlock()
		select {
		case <-next:
		case <-ctx.Done():
			t.Fatalf("waiting for %d voice revocations: have %v", n, f.revoked())
		}
	}
}
