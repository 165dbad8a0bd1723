package usage

import (
	"slices"
	"testing"

	"github.com/twasm/twasm/internal/runid"
	"github.com/twasm/twasm/internal/runtree"
)

// TestLedgerTree: the usage reports follow child runs by runtree's rules,
// as the views and the exports do: each run once (a cycle or a repeated
// link is not followed), at most runtree.MaxDepth runs deep counting the
// root, and a child with no ledger or one that could not be loaded left
// out while its siblings are counted.
func TestLedgerTree(t *testing.T) {
	// chain returns n ledgers, each the parent of the next.
	chain := func(n int) []*Ledger {
		ls := make([]*Ledger, n)
		for i := range ls {
			ls[i] = &Ledger{RunID: runid.New()}
			if i > 0 {
				ls[i-1].Children = []string{ls[i].RunID}
			}
		}
		return ls
	}
	tests := []struct {
		name string
		// make returns the ledgers, the root first, and the indexes of
		// those ledgerTree must give, in order.
		make func() ([]*Ledger, []int)
	}{
		{"deeper than MaxDepth", func() ([]*Ledger, []int) {
			ls := chain(runtree.MaxDepth + 2)
			want := make([]int, runtree.MaxDepth)
			for i := range want {
				want[i] = i
			}
			return ls, want
		}},
		{"exactly MaxDepth", func() ([]*Ledger, []int) {
			ls := chain(runtree.MaxDepth)
			want := make([]int, runtree.MaxDepth)
			for i := range want {
				want[i] = i
			}
			return ls, want
		}},
		{"cycle and repeated link", func() ([]*Ledger, []int) {
			ls := chain(3)
			ls[2].Children = []string{ls[0].RunID, ls[1].RunID}
			ls[0].Children = append(ls[0].Children, ls[1].RunID)
			return ls, []int{0, 1, 2}
		}},
		{"missing and unloadable children left out, siblings kept", func() ([]*Ledger, []int) {
			ls := chain(1)
			bad := &Ledger{RunID: runid.New(), LoadErr: "torn"}
			ok := &Ledger{RunID: runid.New()}
			ls[0].Children = []string{runid.New(), bad.RunID, "../x", ok.RunID}
			return append(ls, bad, ok), []int{0, 2}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ls, wantIdx := tc.make()
			byID := map[string]*Ledger{}
			for _, l := range ls {
				byID[l.RunID] = l
			}
			var want []string
			for _, i := range wantIdx {
				want = append(want, ls[i].RunID)
			}
			var got []string
			for _, l := range ledgerTree(ls[0], byID) {
				got = append(got, l.RunID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("ledgerTree gave %d runs, want %d:\n got  %v\n want %v", len(got), len(want), got, want)
			}
		})
	}
}
