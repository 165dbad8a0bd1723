package sdk

import "testing"

// TestOutputUnstated: a usage whose stated total counts tokens beyond
// its input and output states no whole output (the rest is of a kind it
// does not name): the output is left out and the gap given; a total that
// adds up, or a usage missing one of the three, is kept as it is.
func TestOutputUnstated(t *testing.T) {
	for _, tc := range []struct {
		name   string
		u      Usage
		gap    int64
		output bool // the output still stated
	}{
		{"thoughts in the total only", Usage{Input: N(100), Output: N(7), Total: N(130)}, 23, false},
		{"the total adds up", Usage{Input: N(100), Output: N(7), Total: N(107)}, 0, true},
		{"a total below the parts", Usage{Input: N(100), Output: N(7), Total: N(50)}, 0, true},
		{"no total", Usage{Input: N(100), Output: N(7)}, 0, true},
		{"no input", Usage{Output: N(7), Total: N(130)}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, gap := tc.u.OutputUnstated()
			if _, ok := v.Output.Value(); gap != tc.gap || ok != tc.output {
				t.Errorf("gap %d output stated %v, want %d %v", gap, ok, tc.gap, tc.output)
			}
			if v.Total != tc.u.Total || v.Input != tc.u.Input {
				t.Errorf("input or total changed: %+v", v)
			}
		})
	}
}
