package wire_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/twasm/twasm/internal/wire"
)

func TestWASIAllowList(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"fd_write", true},
		{"random_get", true},
		{"proc_exit", true},
		{"path_open", false},
		{"sock_accept", false},
		{"fd_read", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, wire.WASIAllowed(tt.name))
		})
	}
}

// The list a caller gets is a copy: changing it cannot widen the sandbox.
func TestAllowedWASIIsACopy(t *testing.T) {
	names := wire.AllowedWASI()
	assert.IsIncreasing(t, names)
	for _, n := range names {
		assert.True(t, wire.WASIAllowed(n), n)
	}
	names[0] = "path_open"
	assert.False(t, wire.WASIAllowed("path_open"))
	assert.NotContains(t, wire.AllowedWASI(), "path_open")
}
