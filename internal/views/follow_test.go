package views

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

type collector struct{ lines []string }

func (c *collector) fn(line []byte) (bool, error) {
	c.lines = append(c.lines, string(line))
	return false, nil
}

func (c *collector) take() string {
	s := strings.Join(c.lines, "|")
	c.lines = nil
	return s
}

func poll(t *testing.T, f *Follower, c *collector) string {
	t.Helper()
	if _, err := f.Poll(c.fn); err != nil {
		t.Fatal(err)
	}
	return c.take()
}

func TestFollowerPoll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	var resets []string
	f := NewFollower(path, FollowOptions{OnReset: func(r string) { resets = append(resets, r) }})
	defer f.Close()
	c := &collector{}

	eq(t, poll(t, f, c), "", "missing file")
	eq(t, f.Opened(), false, "opened")

	appendFile(t, path, "one\ntwo\nthr")
	eq(t, poll(t, f, c), "one|two", "complete lines only")
	eq(t, f.Pending(), 3, "held bytes")
	eq(t, poll(t, f, c), "", "nothing new")

	appendFile(t, path, "ee\n")
	eq(t, poll(t, f, c), "three", "partial completed later")

	// A torn tail, then the writer's repair: cut it and write another line,
	// longer than the torn bytes, before the next poll.
	appendFile(t, path, `{"torn`)
	eq(t, poll(t, f, c), "", "torn tail held")
	st, _ := os.Stat(path)
	must(t, os.Truncate(path, st.Size()-6))
	appendFile(t, path, "four-rewritten\n")
	eq(t, poll(t, f, c), "four-rewritten", "held bytes dropped after repair")

	// A repair seen between cut and rewrite.
	appendFile(t, path, "half")
	eq(t, poll(t, f, c), "", "held")
	st, _ = os.Stat(path)
	must(t, os.Truncate(path, st.Size()-4))
	eq(t, poll(t, f, c), "", "cut")
	appendFile(t, path, "five\n")
	eq(t, poll(t, f, c), "five", "after cut")

	// The file shrinks below what was delivered: read it again.
	must(t, os.WriteFile(path, []byte("new\n"), 0o600))
	eq(t, poll(t, f, c), "new", "re-read after shrink")
	eq(t, len(resets), 1, "resets")

	// The file is replaced under the same name.
	tmp := path + ".tmp"
	must(t, os.WriteFile(tmp, []byte("replaced\nfile\n"), 0o600))
	must(t, os.Rename(tmp, path))
	eq(t, poll(t, f, c), "replaced|file", "re-read after replace")
	eq(t, len(resets), 2, "resets")
	must(t, f.Close())
	must(t, f.Close())
}

func TestFollowerStopsAndFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	appendFile(t, path, "a\nb\nc\n")
	f := NewFollower(path, FollowOptions{})
	defer f.Close()
	var got []string
	stop, err := f.Poll(func(l []byte) (bool, error) { got = append(got, string(l)); return string(l) == "b", nil })
	if !stop || err != nil || strings.Join(got, "") != "ab" {
		t.Fatalf("stop=%v err=%v got=%v", stop, err, got)
	}
	boom := errors.New("boom")
	if _, err := f.Poll(func([]byte) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}

	long := NewFollower(path, FollowOptions{MaxLine: 4})
	defer long.Close()
	appendFile(t, path, "0123456789")
	if _, err := long.Poll((&collector{}).fn); !errors.Is(err, ErrFollowLineTooLong) {
		t.Fatalf("err = %v", err)
	}

	dir := NewFollower(t.TempDir(), FollowOptions{})
	defer dir.Close()
	if _, err := dir.Poll((&collector{}).fn); err == nil {
		t.Fatal("reading a directory should fail")
	}
}

// TestFollowerRun follows a file another goroutine writes, torn line and
// all, until the line that ends the run.
func TestFollowerRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	f := NewFollower(path, FollowOptions{Interval: 5 * time.Millisecond})
	defer f.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, chunk := range []string{"l1\n", "l2\nl", "3\n", "end\n", "after\n"} {
			time.Sleep(15 * time.Millisecond)
			// Not appendFile: t.Fatal must not run off the test goroutine.
			fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				t.Error(err)
				return
			}
			_, err = fh.WriteString(chunk)
			fh.Close()
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var got []string
	err := f.Run(context.Background(), func(l []byte) (bool, error) {
		got = append(got, string(l))
		return string(l) == "end", nil
	})
	wg.Wait()
	if err != nil || strings.Join(got, ",") != "l1,l2,l3,end" {
		t.Fatalf("err=%v got=%v", err, got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := NewFollower(path+".none", FollowOptions{Interval: time.Millisecond}).Run(ctx, (&collector{}).fn); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
