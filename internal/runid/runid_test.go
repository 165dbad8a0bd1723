package runid

import (
	"errors"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	tests := []struct {
		name, id, reason string
	}{
		{"canonical v4", "0b6e4b0e-6f0a-4c2e-9d1f-2a3b4c5d6e7f", ""},
		{"variant b", "0b6e4b0e-6f0a-4c2e-bd1f-2a3b4c5d6e7f", ""},
		{"empty", "", "not 36 characters"},
		{"upper case alias", "0B6E4B0E-6F0A-4C2E-9D1F-2A3B4C5D6E7F", "lower-case hex digit at position 1"},
		{"path separator", "0b6e4b0e-6f0a-4c2e-9d1f-2a3b4c5d6e/f", "lower-case hex digit at position 34"},
		{"dot dot", "../../../../../../../../../etc/passw", "lower-case hex digit at position 0"},
		{"no dash", "0b6e4b0e06f0a-4c2e-9d1f-2a3b4c5d6e7f", "want '-' at position 8"},
		{"version 1", "0b6e4b0e-6f0a-1c2e-9d1f-2a3b4c5d6e7f", "not a version 4 UUID"},
		{"NCS variant", "0b6e4b0e-6f0a-4c2e-1d1f-2a3b4c5d6e7f", "not an RFC 4122 variant"},
		{"braced", "{0b6e4b0e-6f0a-4c2e-9d1f-2a3b4c5d6e7f}", "not 36 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Valid(tt.id)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("Valid(%q) = %v, want nil", tt.id, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Valid(%q) = nil, want an error saying %q", tt.id, tt.reason)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Valid(%q) = %v, not ErrInvalid", tt.id, err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("Valid(%q) = %q, want it to say %q", tt.id, err, tt.reason)
			}
		})
	}
}

// A hostile id is truncated and quoted in the message, so it cannot flood
// or forge log lines.
func TestInvalidIDIsQuotedAndTruncated(t *testing.T) {
	id := strings.Repeat("x", 100) + "\nlevel=INFO msg=forged"
	msg := Valid(id).Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("message holds a raw newline: %q", msg)
	}
	if strings.Contains(msg, strings.Repeat("x", 65)) || !strings.Contains(msg, "...") {
		t.Errorf("message does not truncate the id at 64 bytes: %q", msg)
	}
}

func TestNewIsValidAndFresh(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := New()
		if err := Valid(id); err != nil {
			t.Fatalf("New() = %q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("New() returned %q twice", id)
		}
		seen[id] = true
	}
}

// TestKey: a valid run id is 16 bytes that give it back; nothing else
// has a key.
func TestKey(t *testing.T) {
	for range 3 {
		id := New()
		k, ok := Key(id)
		if !ok || FromKey(k) != id {
			t.Fatalf("%s: key %x %v, back %s", id, k, ok, FromKey(k))
		}
	}
	for _, id := range []string{"", "r1", "00006D61-ba25-4c33-a2f9-f4f6218eb922", "00006d61-ba25-4c33-a2f9-f4f6218eb92",
		"00006d61-ba25-5c33-a2f9-f4f6218eb922", "urn:uuid:00006d61-ba25-4c33-a2f9-f4f6218eb922", "{00006d61-ba25-4c33-a2f9-f4f6218eb922}"} {
		if _, ok := Key(id); ok {
			t.Errorf("%q has a key", id)
		}
	}
}
