package runtree_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"github.com/twasm/twasm/internal/runtree"
)

func id(n int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n) }

// store is an in-memory set of runs: each id links to the ids listed;
// an id with no entry has no file, one in bad cannot be read.
type store struct {
	links map[string][]string
	bad   map[string]bool
	fail  string // visiting this run fails
}

type visit struct {
	id    string
	depth int
}

func (s store) walk(ctx context.Context, root string) (visited []visit, skipped []*runtree.ChildError, err error) {
	v := func(_ context.Context, r string, depth int) (runtree.Visited[string, string], error) {
		if r == s.fail {
			return runtree.Visited[string, string]{}, errors.New("disk full")
		}
		links, ok := s.links[r]
		if !ok {
			return runtree.Visited[string, string]{}, fmt.Errorf("open %s: %w", r, fs.ErrNotExist)
		}
		visited = append(visited, visit{r, depth})
		out := runtree.Visited[string, string]{ID: r, Node: r}
		for _, c := range links {
			out.Links = append(out.Links, runtree.Link[string, string]{ID: c,
				Open: func(context.Context) (string, error) {
					if s.bad[c] {
						return "", errors.New("not a transcript")
					}
					if _, ok := s.links[c]; !ok {
						return "", fmt.Errorf("open %s: %w", c, fs.ErrNotExist)
					}
					return c, nil
				},
				Attach: func(child string, ce *runtree.ChildError) {
					switch {
					case ce != nil:
						skipped = append(skipped, ce)
					case child != c:
						panic(fmt.Sprintf("attached %q to the link to %q", child, c))
					}
				}})
		}
		return out, nil
	}
	_, err = runtree.Walk(ctx, root, v)
	return visited, skipped, err
}

func TestWalk(t *testing.T) {
	chain := map[string][]string{}
	for i := 1; i <= 70; i++ {
		chain[id(i)] = []string{id(i + 1)}
	}
	type skip struct {
		child  string
		reason runtree.Reason
	}
	tests := []struct {
		name    string
		s       store
		visited []visit
		skipped []skip
		err     string
	}{
		{name: "depth first, in link order",
			s:       store{links: map[string][]string{id(1): {id(2), id(4)}, id(2): {id(3)}, id(3): {}, id(4): {}}},
			visited: []visit{{id(1), 0}, {id(2), 1}, {id(3), 2}, {id(4), 1}}},
		{name: "a shared child once, a cycle not closed",
			s:       store{links: map[string][]string{id(1): {id(2), id(3)}, id(2): {id(3)}, id(3): {id(1)}}},
			visited: []visit{{id(1), 0}, {id(2), 1}, {id(3), 2}},
			skipped: []skip{{id(1), runtree.Cycle}, {id(3), runtree.Cycle}}},
		{name: "a link to itself",
			s:       store{links: map[string][]string{id(1): {id(1)}}},
			visited: []visit{{id(1), 0}},
			skipped: []skip{{id(1), runtree.Cycle}}},
		{name: "missing, unreadable and invalid children are reported and the rest walked",
			s: store{links: map[string][]string{id(1): {id(9), "../x", id(8), id(2)}, id(2): {}, id(8): {}},
				bad: map[string]bool{id(8): true}},
			visited: []visit{{id(1), 0}, {id(2), 1}},
			skipped: []skip{{id(9), runtree.Missing}, {"../x", runtree.Invalid}, {id(8), runtree.Unreadable}}},
		{name: "at most MaxDepth runs deep",
			s:       store{links: chain},
			visited: chainVisits(runtree.MaxDepth),
			skipped: []skip{{id(runtree.MaxDepth + 1), runtree.TooDeep}}},
		{name: "the visitor's own error ends the walk",
			s:       store{links: map[string][]string{id(1): {id(2), id(3)}, id(2): {}, id(3): {}}, fail: id(2)},
			visited: []visit{{id(1), 0}},
			err:     "disk full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			visited, skipped, err := tc.s.walk(context.Background(), id(1))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(visited, tc.visited) {
				t.Errorf("visited %v,\nwant %v", visited, tc.visited)
			}
			var got []skip
			for _, ce := range skipped {
				got = append(got, skip{ce.Child, ce.Reason})
				if ce.Error() == "" {
					t.Errorf("%s: empty message", ce.Child)
				}
			}
			if !slices.Equal(got, tc.skipped) {
				t.Errorf("skipped %v, want %v", got, tc.skipped)
			}
		})
	}
}

func chainVisits(n int) []visit {
	var out []visit
	for i := 1; i <= n; i++ {
		out = append(out, visit{id(i), i - 1})
	}
	return out
}

// A child run whose file vanished between opening and visiting is
// reported missing, not an error of the walk.
func TestWalkChildVanished(t *testing.T) {
	var got *runtree.ChildError
	v := func(_ context.Context, r string, _ int) (runtree.Visited[string, string], error) {
		if r == id(2) {
			return runtree.Visited[string, string]{}, fmt.Errorf("read: %w", fs.ErrNotExist)
		}
		return runtree.Visited[string, string]{ID: r, Links: []runtree.Link[string, string]{{ID: id(2),
			Open:   func(context.Context) (string, error) { return id(2), nil },
			Attach: func(_ string, ce *runtree.ChildError) { got = ce }}}}, nil
	}
	if _, err := runtree.Walk(context.Background(), id(1), v); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Reason != runtree.Missing {
		t.Fatalf("the vanished child was reported as %v, want missing", got)
	}
}

func TestWalkCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := store{links: map[string][]string{id(1): {id(2), id(3)}, id(2): {}, id(3): {}}}
	v := func(_ context.Context, r string, _ int) (runtree.Visited[string, string], error) {
		if r == id(2) {
			cancel()
		}
		out := runtree.Visited[string, string]{ID: r}
		for _, c := range s.links[r] {
			out.Links = append(out.Links, runtree.Link[string, string]{ID: c, Open: func(context.Context) (string, error) { return c, nil }})
		}
		return out, nil
	}
	if _, err := runtree.Walk(ctx, id(1), v); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPath(t *testing.T) {
	if p, err := runtree.Path("/s/transcripts", id(1)); err != nil || p != "/s/transcripts/"+id(1)+".jsonl" {
		t.Fatalf("Path = %q, %v", p, err)
	}
	for _, bad := range []string{"", "../" + id(1)[3:], id(1) + "/x", "/etc/passwd"} {
		_, err := runtree.Path("/s", bad)
		var ce *runtree.ChildError
		if !errors.As(err, &ce) || ce.Reason != runtree.Invalid {
			t.Errorf("Path(%q) = %v, want an invalid id", bad, err)
		}
	}
}
