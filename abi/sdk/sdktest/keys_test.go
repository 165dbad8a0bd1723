package sdktest

import (
	"fmt"
	"testing"

	"github.com/twasm/twasm/abi"
)

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

func TestCheckLookupKeys(t *testing.T) {
	keys := abi.NewKeySet("id", "role", "type")
	for _, c := range []struct {
		name   string
		looked []*abi.KeySet
		want   []string
	}{
		{"all declared", []*abi.KeySet{abi.NewKeySet("type", "id"), abi.NewKeySet("role")}, nil},
		{"one missing", []*abi.KeySet{abi.NewKeySet("type", "usage")}, []string{`"usage" is looked up but not declared in keys`}},
		{"missing in the second set", []*abi.KeySet{abi.NewKeySet("id"), abi.NewKeySet("model", "role")}, []string{`"model" is looked up but not declared in keys`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckLookupKeys(r, keys, c.looked...)
			if fmt.Sprint(r.errs) != fmt.Sprint(c.want) {
				t.Errorf("reported %q, want %q", r.errs, c.want)
			}
		})
	}
}

func TestCheckKeyNumbers(t *testing.T) {
	keys := abi.NewKeySet("id", "role", "type")
	for _, c := range []struct {
		name string
		n    int
		want map[int]string
		errs []string
	}{
		{"in order", 3, map[int]string{0: "id", 1: "role", 2: "type"}, nil},
		{"a constant names another key", 3, map[int]string{0: "id", 1: "type"}, []string{`key 1 is not "type"`}},
		{"a constant past the keys", 3, map[int]string{3: "usage"}, []string{`key 3 is not "usage"`}},
		{"more constants than keys", 4, map[int]string{0: "id"}, []string{"keys has 3 names, the constants count 4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			CheckKeyNumbers(r, keys, c.n, c.want)
			if fmt.Sprint(r.errs) != fmt.Sprint(c.errs) {
				t.Errorf("reported %q, want %q", r.errs, c.errs)
			}
		})
	}
}
