package copilot

import (
	"testing"

	"github.com/twasm/twasm/abi/sdk"
)

func TestUUIDBytes(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want [16]byte
	}{
		{"960112a7-ed1d-4b10-8ee6-78dca8ce3161", true, [16]byte{0x96, 0x01, 0x12, 0xa7, 0xed, 0x1d, 0x4b, 0x10, 0x8e, 0xe6, 0x78, 0xdc, 0xa8, 0xce, 0x31, 0x61}},
		{"00000000-0000-0000-0000-000000000000", true, [16]byte{}},
		{"960112A7-ed1d-4b10-8ee6-78dca8ce3161", false, [16]byte{}}, // upper case: kept as text
		{"960112a7ed1d-4b10-8ee6-78dca8ce3161-", false, [16]byte{}},
		{"960112a7-ed1d-4b10-8ee6-78dca8ce316", false, [16]byte{}},
		{"960112a7-ed1d-4b10-8ee6-78dca8ce3161x", false, [16]byte{}},
		{"96011za7-ed1d-4b10-8ee6-78dca8ce3161", false, [16]byte{}},
		{"", false, [16]byte{}},
	}
	for _, tt := range tests {
		got, ok := uuidBytes(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("uuidBytes(%q) = %x, %v; want %x, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestReplayedIDs: an id is a replay exactly when the same text was read
// before, whether it is kept as UUID bytes or as text.
func TestReplayedIDs(t *testing.T) {
	n := newNormalizer()
	ids := []struct {
		raw    string
		replay bool
	}{
		{`"960112a7-ed1d-4b10-8ee6-78dca8ce3161"`, false},
		{`"960112A7-ED1D-4B10-8EE6-78DCA8CE3161"`, false}, // another text
		{`"960112a7-ed1d-4b10-8ee6-78dca8ce3161"`, true},
		{`"\u003960112a7-ed1d-4b10-8ee6-78dca8ce3161"`, true}, // the same text, escaped
		{`"960112A7-ED1D-4B10-8EE6-78DCA8CE3161"`, true},
		{`"evt-1"`, false},
		{`"evt-1"`, true},
	}
	for i, id := range ids {
		doc, ok := sdk.Parse([]byte(`{"id":` + id.raw + `}`))
		if !ok {
			t.Fatalf("%d: not JSON", i)
		}
		if got := n.replayed(doc.Root().Get("id")); got != id.replay {
			t.Errorf("%d: replayed(%s) = %v, want %v", i, id.raw, got, id.replay)
		}
	}
}
