package recorder

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
)

func TestScanTail(t *testing.T) {
	id := "8f14e45f-ceea-467a-9575-3d8b4ee3a2b1"
	line := func(seq int) string {
		return `{"seq":` + strconv.Itoa(seq) + `,"run_id":"` + id + `","type":"message.user","payload":{}}` + "\n"
	}
	tests := []struct {
		name      string
		data      string
		wantEnd   int
		wantSeq   uint64
		wantFound bool
	}{
		{"empty", "", 0, 0, false},
		{"one line", line(1), len(line(1)), 1, true},
		{"torn", line(1) + line(2) + `{"seq":3`, len(line(1) + line(2)), 2, true},
		{"no LF at all", `{"seq":3,"run_id":"x"}`, 0, 0, false},
		{"blank lines after", line(4) + "\n\n", len(line(4)) + 2, 4, true},
		{"leading zero is not canonical", `{"seq":07,"run_id":"` + id + `"}` + "\n", 23 + len(id), 0, false},
		{"big seq", line(1<<62) + "tail", len(line(1 << 62)), 1 << 62, true},
		{"overflowing seq skipped", line(3) + `{"seq":99999999999999999999,"run_id":"x"}` + "\n", len(line(3)) + 42, 3, true},
		{"escaped run id falls back to JSON", `{"seq":5,"run_id":"a\"b"}` + "\n", 26, 5, true},
		{"seq not first", `{"run_id":"` + id + `","seq":9}` + "\n", 22 + len(id), 9, true},
		{"garbage line skipped", line(2) + "}garbage}\n", len(line(2)) + 10, 2, true},
	}
	for _, tc := range tests {
		for _, chunk := range []int{0, 1, 7, 4096} {
			t.Run(tc.name+"/chunk"+strconv.Itoa(chunk), func(t *testing.T) {
				ti, err := scanTail(bytes.NewReader([]byte(tc.data)), int64(len(tc.data)), chunk)
				if err != nil {
					t.Fatal(err)
				}
				if ti.end != int64(tc.wantEnd) || ti.lastSeq != tc.wantSeq || ti.found != tc.wantFound {
					t.Fatalf("got end %d seq %d found %v, want %d %d %v", ti.end, ti.lastSeq, ti.found, tc.wantEnd, tc.wantSeq, tc.wantFound)
				}
			})
		}
	}
}

type failingReaderAt struct{ n int }

func (f *failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("boom")
	}
	for i := range p {
		p[i] = '\n'
	}
	return len(p), nil
}

func TestScanTailReadErrors(t *testing.T) {
	for n := 0; n < 4; n++ {
		if _, err := scanTail(&failingReaderAt{n: n}, 10, 4); err == nil && n < 1 {
			t.Fatalf("n=%d: no error", n)
		}
	}
	if _, err := countLines(&failingReaderAt{}, 10); err == nil {
		t.Fatal("countLines: no error")
	}
	// The file shrank under the scan: a short read is an error.
	if _, err := scanTail(bytes.NewReader([]byte("ab\n")), 10, 4); err == nil {
		t.Fatal("short read not reported")
	}
}

// referenceTail is the obvious, slow model of scanTail: split on LF,
// walk complete lines backwards, take the first one with a seq.
func referenceTail(data []byte) (end int64, seq uint64, found bool) {
	i := bytes.LastIndexByte(data, '\n')
	end = int64(i + 1)
	if i < 0 {
		return 0, 0, false
	}
	lines := bytes.Split(data[:i], []byte{'\n'})
	for k := len(lines) - 1; k >= 0; k-- {
		l := lines[k]
		if len(l) < 2 {
			continue
		}
		if l[len(l)-1] == '}' {
			if s, _, ok := parseCanonicalHead(l[:min(len(l), 128)]); ok {
				return end, s, true
			}
		}
		if s, _, ok := parseLineJSON(l); ok {
			return end, s, true
		}
	}
	return end, 0, false
}

// FuzzScanTail: arbitrary file contents never make the tail scan panic or
// fail; it agrees with the reference model; and what a repair keeps
// (data[:end]) holds every complete line, while what it moves out
// (data[end:]) holds no LF, so no complete line is ever lost.
func FuzzScanTail(f *testing.F) {
	f.Add([]byte(`{"seq":1,"run_id":"a"}`+"\n"+`{"seq":2,"ru`), 3)
	f.Add([]byte("\n\n\n"), 1)
	f.Add([]byte(`{"seq":18446744073709551615,"run_id":"x"}`+"\n"), 5)
	f.Add([]byte(`{"seq":18446744073709551616,"run_id":"x"}`+"\n"), 64)
	f.Add([]byte("\xff\xfe\x00{\"seq\":3}\r\n{\"seq\":"), 2)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		chunk = chunk%97 + 1
		if chunk < 1 {
			chunk = -chunk + 1
		}
		ti, err := scanTail(bytes.NewReader(data), int64(len(data)), chunk)
		if err != nil {
			t.Fatal(err)
		}
		end, seq, found := referenceTail(data)
		if ti.end != end || ti.lastSeq != seq || ti.found != found {
			t.Fatalf("scan (end %d seq %d found %v) != reference (%d %d %v)", ti.end, ti.lastSeq, ti.found, end, seq, found)
		}
		if bytes.IndexByte(data[ti.end:], '\n') >= 0 {
			t.Fatal("the torn part holds a complete line")
		}
		if ti.end > 0 && data[ti.end-1] != '\n' {
			t.Fatal("the kept part does not end at a line boundary")
		}
	})
}
