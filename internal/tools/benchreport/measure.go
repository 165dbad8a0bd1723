package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twasm/twasm/internal/testing/benchtest"
)

// run is one child process: its wall time, CPU time (user+system, in
// seconds) and peak resident set size in bytes (0 where unknown).
type run struct {
	Wall, CPU float64
	MaxRSS    float64
}

// Measurements are the command-level figures benchreport takes itself by
// running the twasm binary.
type Measurements struct {
	// Skipped says why nothing was measured (no binary given).
	Skipped string

	WarmRuns, ColdRuns int
	WarmRecord         []run // record of the 10-line input, warm cache
	Version            []run // twasm --version, interleaved with WarmRecord
	ColdRecord         []run // record with a fresh, empty cache each time
	StartupErr         error
	ColdErr            error

	RSSBytes int64 // size of the large input
	RSS      run
	RSSErr   error
	// The same record of a quarter of the large input (whole copies,
	// made the same way): its peak RSS beside the large one's says
	// whether the peak grows with the input.
	RSSSmallBytes int64
	RSSSmall      run
	RSSSmallErr   error

	// Whole records of a RecordBytes claude corpus with --fsync never,
	// each into an empty storage; RecordCorpus names the corpus.
	RecordBytes  int64
	RecordCorpus string
	Record       []run
	RecordErr    error

	// RealLogs are the real session logs of each provider recorded by
	// the binary and read by jq in the same run.
	RealLogs []RealLog

	// Modules are the bundled modules' sizes in bytes, by file name, as
	// the build embeds them.
	Modules    map[string]int64
	ModulesErr error
}

// childEnv is the environment of every child: the caller's, without the
// variables that would point twasm at the caller's plugins, cache or
// storage, and with an empty configuration directory.
func childEnv(configDir, cacheDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TWASM_PLUGIN_PATH", "TWASM_STORAGE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "XDG_CONFIG_HOME="+configDir, "XDG_CACHE_HOME="+cacheDir)
}

// runOnce runs the binary and measures it; a non-zero exit is an error
// carrying the end of its stderr.
func runOnce(bin string, env []string, args ...string) (run, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	r := run{Wall: wall.Seconds()}
	if st := cmd.ProcessState; st != nil {
		r.CPU = (st.UserTime() + st.SystemTime()).Seconds()
		r.MaxRSS = maxRSS(st)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = "…" + msg[len(msg)-300:]
		}
		return r, fmt.Errorf("%s %s: %w: %s", filepath.Base(bin), strings.Join(args, " "), err, msg)
	}
	return r, nil
}

// startupInput is the 10-line Claude stream of the start-up figure: the
// bundled example's 8 lines with its last assistant line repeated twice
// before the final result line.
func startupInput(example string) ([]byte, error) {
	b, err := os.ReadFile(example)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	last := -1
	for i, l := range lines {
		if strings.Contains(l, `"type":"assistant"`) {
			last = i
		}
	}
	if last < 0 {
		return nil, fmt.Errorf("%s has no assistant line", example)
	}
	for len(lines) < 10 {
		lines = append(lines[:last+1], append([]string{lines[last]}, lines[last+1:]...)...)
	}
	return []byte(strings.Join(lines[:10], "\n") + "\n"), nil
}

// measureStartup times `twasm record` of the 10-line input with a warm
// compilation cache (warm runs, interleaved with `twasm --version`) and
// with an empty one (cold runs, each with a fresh cache directory).
// quietAfterDeletes is how long the command-level measurements wait,
// after the benchmarks before them, for the inodes those deleted to age
// past ext4's recently-deleted window (60 s).
const quietAfterDeletes = 61 * time.Second

// settle writes back what the benchmarks before left dirty (gigabytes,
// from the archive and index benchmarks), so that its writeback does not
// compete with the fsyncs of the runs being timed, then lets the files
// they deleted (tens of thousands of generated sessions, or the child
// runs of the whole-record figure's sub-agent calls) age: ext4 without a
// journal skips every inode deleted in the last 60 seconds when it
// allocates one, and each file or directory twasm created right after
// them cost 0.6 ms of CPU instead of 0.1-0.2 (14% of a 10-line record).
// A user's record is not preceded by the benchmarks' deletions.
func settle() {
	syscall.Sync()
	time.Sleep(quietAfterDeletes)
}

func measureStartup(m *Measurements, bin, example, tmp string) {
	in, err := startupInput(example)
	if err != nil {
		m.StartupErr = err
		return
	}
	input := filepath.Join(tmp, "claude-10.jsonl")
	if err := os.WriteFile(input, in, 0o600); err != nil {
		m.StartupErr = err
		return
	}
	config := filepath.Join(tmp, "config")
	storage := filepath.Join(tmp, "storage")
	warm := childEnv(config, filepath.Join(tmp, "cache-warm"))
	record := []string{"--storage", storage, "record", "--provider", "claude", "--input", input, "--quiet"}
	// Fill the cache (and the page cache) first; not counted.
	if _, err := runOnce(bin, warm, record...); err != nil {
		m.StartupErr = err
		return
	}
	settle()
	for range m.WarmRuns {
		r, err := runOnce(bin, warm, record...)
		if err != nil {
			m.StartupErr = err
			return
		}
		m.WarmRecord = append(m.WarmRecord, r)
		if r, err = runOnce(bin, warm, "--version"); err != nil {
			m.StartupErr = err
			return
		}
		m.Version = append(m.Version, r)
	}
	for i := range m.ColdRuns {
		cache := filepath.Join(tmp, fmt.Sprintf("cache-cold-%d", i))
		r, err := runOnce(bin, childEnv(config, cache), record...)
		_ = os.RemoveAll(cache)
		if err != nil {
			m.ColdErr = err
			return
		}
		m.ColdRecord = append(m.ColdRecord, r)
	}
}

// bigInput writes a file of about size bytes by repeating the given
// line-oriented inputs (each ending with a newline), whole copies only.
// Each copy after the first has its records' ids made its own
// (benchtest.Copies):
// the same records again in one stream are a replay, which the plugins
// that know their records' ids skip (the claude plugin read 1,224 events
// of the AWF capture repeated to 16 MiB where its copies hold 26,466), so
// that a record of the repeated inputs measured work it skipped.
func bigInput(path string, files []string, size int64) (int64, error) {
	var one bytes.Buffer
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		b = bytes.TrimRight(b, "\n")
		if len(b) == 0 {
			continue
		}
		one.Write(b)
		one.WriteByte('\n')
	}
	if one.Len() == 0 {
		return 0, errors.New("no input files to repeat")
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	copies := benchtest.NewCopies(one.Bytes())
	var n int64
	for nth := 0; n < size; nth++ {
		k, err := copies.Write(w, nth)
		n += int64(k)
		if err != nil {
			f.Close()
			return n, err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return n, err
	}
	return n, f.Close()
}

// inputFiles lists the golden inputs of a provider directory: the
// line-oriented ones (*.jsonl), without the expected outputs.
func inputFiles(dir string) []string {
	all, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var out []string
	for _, f := range all {
		if !strings.HasSuffix(f, ".golden.jsonl") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// measureRSS records a large input through the binary with
// --fsync never and reads the child's peak RSS, then the same for a
// quarter of that size, each into a storage of its own. The inputs and
// the storages are removed afterwards.
func measureRSS(m *Measurements, bin, goldenDir, tmp string, size int64) {
	m.RSSBytes, m.RSS, m.RSSErr = recordRSS(bin, goldenDir, tmp, "rss", size)
	m.RSSSmallBytes, m.RSSSmall, m.RSSSmallErr = recordRSS(bin, goldenDir, tmp, "rss-small", size/4)
}

// recordRSS makes an input of about size bytes (bigInput) and records
// it once (name names the input and the storage).
func recordRSS(bin, goldenDir, tmp, name string, size int64) (int64, run, error) {
	input := filepath.Join(tmp, name+".jsonl")
	storage := filepath.Join(tmp, "storage-"+name)
	defer os.RemoveAll(storage)
	defer os.Remove(input)
	n, err := bigInput(input, inputFiles(goldenDir), size)
	if err != nil {
		return n, run{}, err
	}
	env := childEnv(filepath.Join(tmp, "config"), filepath.Join(tmp, "cache-warm"))
	r, err := runOnce(bin, env, "--storage", storage, "record", "--provider", "claude",
		"--input", input, "--fsync", "never", "--quiet")
	return n, r, err
}

// parseSize reads a byte count: a plain integer or one with a K, M, G
// (powers of 1000) or Ki, Mi, Gi (powers of 1024) suffix, optionally
// followed by B.
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "B")
	mult := int64(1)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// measureRecord records a size-byte claude corpus runs times through the
// binary with --fsync never, each into an empty storage, for the figure
// per CPU second: the AWF capture when it is there (the corpus the
// AWF-style baseline reads), else the claude golden inputs.
func measureRecord(m *Measurements, bin, awfFile, goldenDir, tmp string, size int64, runs int) {
	files, corpus := inputFiles(goldenDir), "the claude golden inputs"
	if _, err := os.Stat(awfFile); err == nil {
		files, corpus = []string{awfFile}, "the AWF capture"
	}
	big := filepath.Join(tmp, "record.jsonl")
	defer os.Remove(big)
	n, err := bigInput(big, files, size)
	if err != nil {
		m.RecordErr = err
		return
	}
	m.RecordBytes, m.RecordCorpus = n, corpus
	env := childEnv(filepath.Join(tmp, "config"), filepath.Join(tmp, "cache-warm"))
	for i := range runs {
		storage := filepath.Join(tmp, fmt.Sprintf("storage-record-%d", i))
		r, err := runOnce(bin, env, "--storage", storage, "record", "--provider", "claude",
			"--input", big, "--fsync", "never", "--quiet")
		_ = os.RemoveAll(storage)
		if err != nil {
			m.RecordErr = err
			return
		}
		m.Record = append(m.Record, r)
	}
}

// moduleSizes lists the size of every .wasm file in dir.
func moduleSizes(dir string) (map[string]int64, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no .wasm file in %s (run make)", dir)
	}
	out := map[string]int64{}
	for _, n := range names {
		st, err := os.Stat(n)
		if err != nil {
			return nil, err
		}
		out[filepath.Base(n)] = st.Size()
	}
	return out, nil
}

// RealLog is one provider's real session logs recorded whole by the
// binary and read by `jq -c .`, in the same run: the CPU (user+sys) of
// each child, runs interleaved.
type RealLog struct {
	Provider string
	Files    int   // real logs concatenated into the input
	LeftOut  int   // real logs left out: a line jq cannot read
	Bytes    int64 // its size
	Record   []run // twasm record --fsync never, into a storage with an index
	JQ       []run // jq -c . of the same file, output discarded
	Err      error
}

// realLogProviders are the providers whose real session logs (the
// repository's captures and the shared fixtures) are large enough for a
// figure per CPU second: Gemini's are a few KiB, where start-up is all.
var realLogProviders = []string{"claude", "codex", "copilot"}

// realLogFiles lists a provider's real logs: every JSON Lines input of
// testdata/captures/<provider> and ../shared/fixtures/<provider>, sorted,
// but those holding a line that is not JSON (a capture cut short or
// malformed on purpose), which `jq -c .` refuses and so cannot time:
// they are counted in leftOut.
func realLogFiles(root, provider string) (files []string, leftOut int) {
	for _, dir := range []string{filepath.Join(root, "testdata", "captures", provider), filepath.Join(root, "..", "shared", "fixtures", provider)} {
		fs, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range fs {
			if jsonLines(f) {
				files = append(files, f)
			} else {
				leftOut++
			}
		}
	}
	sort.Strings(files)
	return files, leftOut
}

// jsonLines reports whether every line of the file that is not blank is
// a JSON value (false, too, when it cannot be read).
func jsonLines(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
			return false
		}
	}
	return true
}

// measureRealLogs records each provider's real logs, concatenated once
// (every line appears once, as in a real history: no session repeated),
// runs times through the binary and through jq, interleaved. The storage
// gets its search index from an uncounted first record, as a user's
// storage has one: a record into a storage without one builds it.
func measureRealLogs(m *Measurements, bin, jq, root, tmp string, runs int) {
	for _, p := range realLogProviders {
		rl := RealLog{Provider: p}
		files, left := realLogFiles(root, p)
		rl.Files, rl.LeftOut = len(files), left
		in := filepath.Join(tmp, "real-"+p+".jsonl")
		storage := filepath.Join(tmp, "storage-real-"+p)
		rl.Bytes, rl.Err = bigInput(in, files, 1)
		if rl.Err == nil && jq == "" {
			rl.Err = errors.New("jq is not installed")
		}
		if rl.Err == nil {
			env := childEnv(filepath.Join(tmp, "config"), filepath.Join(tmp, "cache-warm"))
			record := []string{"--storage", storage, "record", "--provider", p, "--input", in, "--fsync", "never", "--quiet"}
			_, rl.Err = runOnce(bin, env, record...)
			for i := 0; i < runs && rl.Err == nil; i++ {
				var r run
				if r, rl.Err = runOnce(bin, env, record...); rl.Err != nil {
					break
				}
				rl.Record = append(rl.Record, r)
				if r, rl.Err = runOnce(jq, env, "-c", ".", in); rl.Err != nil {
					break
				}
				rl.JQ = append(rl.JQ, r)
			}
		}
		_ = os.RemoveAll(storage)
		_ = os.Remove(in)
		m.RealLogs = append(m.RealLogs, rl)
	}
}
