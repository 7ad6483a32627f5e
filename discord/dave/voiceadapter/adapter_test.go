package voiceadapter

import (
	"encoding/json"
	"testing"

	"github.com/banterbot/banter/discord/dave"
	"github.com/banterbot/banter/discord/dave/mls"
	"github.com/banterbot/banter/discord/dave/wire"
	"github.com/banterbot/banter/discord/voice/gateway"
)

// TestAdapter: op 4 through the adapter yields a binary op 26 key package
// and the opcode numbers line up with the voice gateway package.
func TestAdapter(t *testing.T) {
	e := New(dave.NewSession(dave.Config{UserID: 7, ChannelID: 8}))
	if e.MaxProtocolVersion() != 1 {
		t.Fatal("max protocol version")
	}
	d, _ := json.Marshal(map[string]any{"dave_protocol_version": 1})
	out, err := e.HandleGateway(gateway.OpSessionDescription, d, false)
	if err != nil || len(out) != 1 || out[0].Op != gateway.OpMLSKeyPackage || !out[0].Binary {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := mls.UnmarshalKeyPackage(out[0].Payload); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		g gateway.Opcode
		d wire.Opcode
	}{
		{gateway.OpDAVEPrepareTransition, wire.OpPrepareTransition},
		{gateway.OpDAVETransitionReady, wire.OpTransitionReady},
		{gateway.OpMLSWelcome, wire.OpMLSWelcome},
		{gateway.OpMLSInvalidCommitWelcome, wire.OpMLSInvalidCommitWelcome},
		{gateway.OpClientDisconnect, wire.OpClientDisconnect},
	} {
		if int(c.g) != int(c.d) {
			t.Errorf("%s = %d, dave %s = %d", c.g, c.g, c.d, c.d)
		}
	}
}
