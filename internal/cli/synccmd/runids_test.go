package synccmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRunIDs: the runs a round wrote are given back in order, an id
// that is not a valid run id as it was, none when it wrote none.
func TestRunIDs(t *testing.T) {
	var r runIDs
	assert.Nil(t, r.list())
	ids := []string{"00006d61-ba25-4c33-a2f9-f4f6218eb922", "not a run id", "ffffffff-ffff-4fff-8fff-ffffffffffff", "00006d61-ba25-4c33-a2f9-f4f6218eb922"}
	for _, id := range ids {
		r.add(id)
	}
	assert.Equal(t, 4, r.n)
	assert.Equal(t, ids, r.list())
}
