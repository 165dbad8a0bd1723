package recorder

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/runstate"
)

const scanID = "8f14e45f-ceea-467a-9575-3d8b4ee3a2b1"

func scanLine(seq int, typ string) string {
	return `{"seq":` + strconv.Itoa(seq) + `,"run_id":"` + scanID + `","type":"` + typ + `","path":"a","iteration":0,"payload":{"name":"a","kind":"agent"}}` + "\n"
}

func scanBytes(data []byte, chunk int) (int64, runstate.State, int64, error) {
	var st runstate.State
	sc := scanner{ra: bytes.NewReader(data), runID: scanID, st: &st}
	if chunk > 0 {
		sc.buf = make([]byte, chunk)
	}
	end, err := sc.scan(0, int64(len(data)))
	return end, st, sc.lines, err
}

func TestScan(t *testing.T) {
	long := `{"seq":3,"run_id":"` + scanID + `","type":"message.user","payload":{"x":"` + strings.Repeat("y", 3000) + `"}}` + "\n"
	tests := []struct {
		name      string
		data      string
		wantEnd   int
		wantSeq   uint64
		wantLines int64
		wantOpen  int
		finished  bool
	}{
		{"empty", "", 0, 0, 0, 0, false},
		{"one line", scanLine(1, "message.user"), len(scanLine(1, "message.user")), 1, 1, 0, false},
		{"torn", scanLine(1, "message.user") + scanLine(2, "message.user") + `{"seq":3`, len(scanLine(1, "message.user") + scanLine(2, "message.user")), 2, 2, 0, false},
		{"no LF at all", `{"seq":3,"run_id":"x"}`, 0, 0, 0, 0, false},
		{"blank lines after", scanLine(4, "message.user") + "\n\n", len(scanLine(4, "message.user")) + 2, 4, 3, 0, false},
		{"leading zero falls back to JSON", `{"seq":07,"run_id":"` + scanID + `"}` + "\n", 23 + len(scanID), 0, 1, 0, false},
		{"big seq", scanLine(1<<62, "message.user") + "tail", len(scanLine(1<<62, "message.user")), 1 << 62, 1, 0, false},
		{"overflowing seq skipped", scanLine(3, "message.user") + `{"seq":99999999999999999999,"run_id":"x"}` + "\n", len(scanLine(3, "message.user")) + 42, 3, 2, 0, false},
		{"seq not first", `{"run_id":"` + scanID + `","seq":9}` + "\r\n", 23 + len(scanID), 9, 1, 0, false},
		{"garbage line skipped", scanLine(2, "message.user") + "}garbage}\n", len(scanLine(2, "message.user")) + 10, 2, 2, 0, false},
		{"long line", scanLine(1, "step.started") + long + scanLine(4, "message.user"), len(scanLine(1, "step.started") + long + scanLine(4, "message.user")), 4, 3, 1, false},
		{"step closed", scanLine(1, "run.started") + scanLine(2, "step.started") + scanLine(3, "step.completed"), len(scanLine(1, "run.started") + scanLine(2, "step.started") + scanLine(3, "step.completed")), 3, 3, 0, false},
		{"finished", scanLine(1, "run.started") + scanLine(2, "step.started") + scanLine(3, "run.completed"), len(scanLine(1, "run.started") + scanLine(2, "step.started") + scanLine(3, "run.completed")), 3, 3, 1, true},
	}
	for _, tc := range tests {
		for _, chunk := range []int{0, 1, 7, 600, 4096} {
			t.Run(tc.name+"/chunk"+strconv.Itoa(chunk), func(t *testing.T) {
				end, st, lines, err := scanBytes([]byte(tc.data), chunk)
				if err != nil {
					t.Fatal(err)
				}
				if end != int64(tc.wantEnd) || st.LastSeq != tc.wantSeq || lines != tc.wantLines || len(st.Open) != tc.wantOpen || st.Finished != tc.finished {
					t.Fatalf("got end %d seq %d lines %d open %d finished %v, want %d %d %d %d %v",
						end, st.LastSeq, lines, len(st.Open), st.Finished, tc.wantEnd, tc.wantSeq, tc.wantLines, tc.wantOpen, tc.finished)
				}
			})
		}
	}
}

func TestScanOtherRun(t *testing.T) {
	data := scanLine(1, "message.user") + strings.Replace(scanLine(2, "message.user"), scanID, "8f14e45f-ceea-467a-9575-3d8b4ee3a2b2", 1)
	if _, _, _, err := scanBytes([]byte(data), 0); !errors.Is(err, ErrRunMismatch) {
		t.Fatalf("got %v", err)
	}
}

type failingReaderAt struct{ n int }

func (f *failingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("boom")
	}
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestScanReadErrors(t *testing.T) {
	for n := 0; n < 3; n++ {
		var st runstate.State
		sc := scanner{ra: &failingReaderAt{n: n}, runID: scanID, st: &st, buf: make([]byte, 4)}
		if _, err := sc.scan(0, 10); err == nil {
			t.Fatalf("n=%d: no error", n)
		}
	}
	// The file shrank under the scan: a short read is an error.
	var st runstate.State
	sc := scanner{ra: bytes.NewReader([]byte("ab\n")), runID: scanID, st: &st}
	if _, err := sc.scan(0, 10); err == nil {
		t.Fatal("short read not reported")
	}
}

// referenceScan is the obvious, slow model of the scanner: split on LF
// and look at every complete line whole.
func referenceScan(data []byte) (end int64, seq uint64, lines int64, mismatch bool) {
	i := bytes.LastIndexByte(data, '\n')
	end = int64(i + 1)
	if i < 0 {
		return 0, 0, 0, false
	}
	for _, l := range bytes.Split(data[:i], []byte{'\n'}) {
		lines++
		t := trimCR(l)
		h, ok, _ := parseHead(l[:min(len(l), headLen)], len(t) > 0 && t[len(t)-1] == '}', func() ([]byte, error) { return l, nil }, int64(len(l)))
		if !ok {
			continue
		}
		if h.RunID != scanID {
			return end, seq, lines, true
		}
		seq = *h.Seq
	}
	return end, seq, lines, false
}

// FuzzScan: arbitrary file contents never make the scan panic; it agrees
// with the reference model whatever the buffer size; and what a repair
// keeps (data[:end]) holds every complete line, while what it moves out
// (data[end:]) holds no LF, so no complete line is ever lost.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"seq":1,"run_id":"`+scanID+`"}`+"\n"+`{"seq":2,"ru`), 3)
	f.Add([]byte("\n\n\n"), 1)
	f.Add([]byte(`{"seq":18446744073709551615,"run_id":"x"}`+"\n"), 5)
	f.Add([]byte(`{"seq":18446744073709551616,"run_id":"x"}`+"\n"), 64)
	f.Add([]byte("\xff\xfe\x00{\"seq\":3}\r\n{\"seq\":"), 2)
	f.Add([]byte(scanLine(1, "run.started")+scanLine(2, "step.started")), 600)
	f.Fuzz(func(t *testing.T, data []byte, chunk int) {
		chunk = chunk%997 + 1
		if chunk < 1 {
			chunk = -chunk + 1
		}
		end, st, lines, err := scanBytes(data, chunk)
		wantEnd, wantSeq, wantLines, mismatch := referenceScan(data)
		if mismatch {
			if !errors.Is(err, ErrRunMismatch) {
				t.Fatalf("another run's line not refused: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if end != wantEnd || st.LastSeq != wantSeq || lines != wantLines {
			t.Fatalf("scan (end %d seq %d lines %d) != reference (%d %d %d)", end, st.LastSeq, lines, wantEnd, wantSeq, wantLines)
		}
		if bytes.IndexByte(data[end:], '\n') >= 0 {
			t.Fatal("the torn part holds a complete line")
		}
		if end > 0 && data[end-1] != '\n' {
			t.Fatal("the kept part does not end at a line boundary")
		}
	})
}
