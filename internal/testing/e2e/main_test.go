package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/internal/testing/cmdtest"
	"github.com/twasm/twasm/internal/testing/syncbuf"
	"github.com/twasm/twasm/internal/tools/wasmbuild"
	"github.com/twasm/twasm/internal/wasm/wasmdata"
	"github.com/twasm/twasm/internal/wasm/wasminterrupt"
	"github.com/twasm/twasm/transcript"
)

var (
	// binary is the twasm executable under test.
	binary string
	// fake is the fake agent executable (package fakeagent, built by
	// testMain).
	fake string
	// root is the module root.
	root string
	// home, cache and config are shared by every twasm process of the
	// package, so that the wazero compilation cache is warm after the
	// first one and the user's own is never touched.
	home, cache, config string
)

// bundledPlugins are the plugins the tests need inside the binary: every
// plugin of the repository (plugins/*/wasm), as make bundles them, since
// the captures harness runs every provider.
var bundledPlugins []string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if _, err := exec.LookPath("go"); err != nil {
		fmt.Println("e2e: skipped: no go tool on PATH")
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || len(bytes.TrimSpace(gomod)) == 0 {
		fmt.Fprintln(os.Stderr, "e2e: cannot find the module root:", err)
		return 1
	}
	root = filepath.Dir(string(bytes.TrimSpace(gomod)))
	mains, _ := filepath.Glob(filepath.Join(root, "plugins", "*", "wasm", "main.go"))
	for _, m := range mains {
		bundledPlugins = append(bundledPlugins, filepath.Base(filepath.Dir(filepath.Dir(m))))
	}
	tmp, err := os.MkdirTemp("", "twasm-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	home, cache, config = filepath.Join(tmp, "home"), filepath.Join(tmp, "cache"), filepath.Join(tmp, "config")
	for _, d := range []string{home, cache, config} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if err := ensureBundled(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	binary = filepath.Join(tmp, "twasm")
	// Built as make builds bin/twasm (CGO_ENABLED=0, -trimpath): the
	// binary users get, and on a fresh clone the packages `make test`
	// compiled for bin/twasm serve again from the build cache (without
	// -trimpath the checkout's path is in some packages' build keys).
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", binary, "./cmd/twasm")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Dir = root
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build twasm:", err)
		return 1
	}
	// The fake agent, without the race detector: a small program's
	// start, not a race-instrumented test binary's, for each of the few
	// hundred agents the tests start.
	fake = filepath.Join(tmp, "fakeagent")
	build = exec.CommandContext(ctx, "go", "build", "-o", fake, "./internal/testing/e2e/fakeagent")
	build.Dir = root
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build the fake agent:", err)
		return 1
	}
	// Warm the compilation cache once, so that parallel tests do not all
	// compile the plugins at the same time.
	warm := exec.CommandContext(ctx, binary, "plugins", "list")
	warm.Env = env()
	if out, err := warm.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: twasm plugins list: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// ensureBundled makes internal/bundled/wasm/<p>.wasm the current build of
// each plugin the tests need (the binary embeds that directory), using
// wasmbuild's cache keyed by the plugin's sources, compacted and
// instrumented as make leaves it. A file that is already identical is left alone; a new one
// appears atomically, and then the build's record of the directory is
// rewritten too (internal/tools/bundlerecord), as make would.
func ensureBundled(ctx context.Context) error {
	dir := filepath.Join(root, "internal", "bundled", "wasm")
	var tc *wasmbuild.Toolchain // found when a module is to be built
	changed := false
	for _, p := range bundledPlugins {
		dst := filepath.Join(dir, p+".wasm")
		pkg := filepath.Join(root, "plugins", p, "wasm")
		// A module make built from today's sources of that plugin (its
		// package and what it imports) is used as it is; one built from
		// older sources is built again with the toolchain make used (its
		// stamp), so that the next `make` embeds and `make golden` checks
		// under that toolchain's name what that toolchain built. (A change
		// to one plugin once rebuilt the other fifteen with Go, and make
		// then took those for its TinyGo builds.)
		newest, err := newestSource(ctx, pkg)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(dst); err == nil && fi.Mode().IsRegular() && !fi.ModTime().Before(newest) {
			continue
		}
		if tc == nil {
			found, err := stampToolchain(ctx)
			if err != nil {
				return err
			}
			tc = &found
		}
		built, err := tc.Cached(ctx, pkg, wasmbuild.TestCacheDir())
		if err != nil {
			return err
		}
		want, err := os.ReadFile(built)
		if err != nil {
			return err
		}
		if c, err := wasmdata.Compact(want, wasmdata.Gap); err == nil {
			want = c
		}
		if c, err := wasminterrupt.Instrument(want); err == nil {
			want = c
		}
		if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, want) {
			continue
		}
		changed = true
		tmp, err := os.CreateTemp(dir, ".e2e-*.wasm")
		if err != nil {
			return err
		}
		_, werr := tmp.Write(want)
		cerr := tmp.Close()
		if werr != nil || cerr != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("write %s: %v %v", dst, werr, cerr)
		}
		if err := os.Chmod(tmp.Name(), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp.Name(), dst); err != nil {
			os.Remove(tmp.Name())
			return err
		}
	}
	if !changed {
		return nil
	}
	record := exec.CommandContext(ctx, "go", "run", "./internal/tools/bundlerecord", dir)
	record.Dir = root
	if out, err := record.CombinedOutput(); err != nil {
		return fmt.Errorf("record bundled plugins: %v\n%s", err, out)
	}
	return nil
}

// newestSource is the modification time of the newest file the plugin
// package pkg builds from (wasmbuild.SourceFiles, the files its cache key
// hashes), or of go.mod.
func newestSource(ctx context.Context, pkg string) (time.Time, error) {
	var newest time.Time
	note := func(path string) error {
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
		return nil
	}
	if err := note(filepath.Join(root, "go.mod")); err != nil {
		return newest, err
	}
	files, err := wasmbuild.SourceFiles(ctx, pkg)
	if err != nil {
		return newest, fmt.Errorf("sources of %s: %w", pkg, err)
	}
	for _, f := range files {
		if err := note(f.Path()); err != nil {
			return newest, fmt.Errorf("sources of %s: %w", pkg, err)
		}
	}
	return newest, nil
}

// stampToolchain is the toolchain make built the bundled modules with,
// as its stamp (bin/wasm-toolchain: "tinygo FLAGS" or "go") says; Go
// when there is no stamp (no make ran). A stamp naming TinyGo where none
// is installed is an error: building those modules with Go instead would
// pass them off as TinyGo's.
func stampToolchain(ctx context.Context) (wasmbuild.Toolchain, error) {
	b, err := os.ReadFile(filepath.Join(root, "bin", "wasm-toolchain"))
	if errors.Is(err, fs.ErrNotExist) {
		return wasmbuild.Toolchain{}, nil
	}
	if err != nil {
		return wasmbuild.Toolchain{}, err
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 || fields[0] != "tinygo" {
		return wasmbuild.Toolchain{}, nil
	}
	tc, ok := wasmbuild.FindTinyGo(ctx, root)
	if !ok {
		return wasmbuild.Toolchain{}, errors.New("the bundled plugins were built with TinyGo (bin/wasm-toolchain) and no TinyGo is installed: run make, which installs it")
	}
	tc.Flags = fields[1:]
	return tc, nil
}

// env is the environment of every twasm process: nothing of the user's.
func env(extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CACHE_HOME=" + cache, "XDG_CONFIG_HOME=" + config, "NO_COLOR=1",
	}, extra...)
}

type result struct {
	code        int
	out, errOut string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.errOut)
}

// proc is a twasm process.
type proc struct {
	cmd         *exec.Cmd
	out, errOut *syncbuf.Buffer
}

// start starts twasm with args; stdin may be nil; extraEnv is added to
// the environment (the fake agent's settings).
func start(t *testing.T, stdin []byte, extraEnv []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env(extraEnv...)
	cmd.Dir = t.TempDir()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	p := &proc{cmd: cmd, out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}}
	cmd.Stdout, cmd.Stderr = p.out, p.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return p
}

// wait waits for the process, killing it after timeout.
func (p *proc) wait(t *testing.T, timeout time.Duration) result {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-done
		t.Fatalf("twasm %v did not end within %v\nstdout: %s\nstderr: %s", p.cmd.Args[1:], timeout, p.out, p.errOut)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, out: p.out.String(), errOut: p.errOut.String()}
}

// twasm runs twasm to the end.
func twasm(t *testing.T, args ...string) result {
	t.Helper()
	return start(t, nil, nil, args...).wait(t, hangBound)
}

// twasmOK runs twasm and fails the test unless it exits 0.
func twasmOK(t *testing.T, args ...string) result {
	t.Helper()
	r := twasm(t, args...)
	if r.code != 0 {
		t.Fatalf("twasm %v: %v", args, r)
	}
	return r
}

// transcriptPath is the file of run id in storage.
func transcriptPath(storage, id string) string {
	return filepath.Join(storage, "transcripts", id+".jsonl")
}

// readRun decodes every line of a run file; a line that does not decode
// fails the test.
func readRun(t *testing.T, path string) []*transcript.Event {
	t.Helper()
	return clitest.ReadRun(t, path)
}

// ofType returns the events of type typ.
func ofType(evs []*transcript.Event, typ transcript.EventType) []*transcript.Event {
	return clitest.OfType(evs, typ)
}

// checkSeq checks that seq runs 1..N in file order.
func checkSeq(t *testing.T, evs []*transcript.Event) {
	t.Helper()
	clitest.CheckSeq(t, evs)
}

// agentResult returns the result of the only agent step.completed.
func agentResult(t *testing.T, evs []*transcript.Event) (*transcript.StepPayload, *transcript.AgentResult) {
	t.Helper()
	return clitest.AgentResult(t, evs)
}

// runEnd returns the payload of run.completed, which must be the last line.
func runEnd(t *testing.T, evs []*transcript.Event) *transcript.StepPayload {
	t.Helper()
	return clitest.RunEnd(t, evs)
}

// validate runs twasm validate on the files and expects them to be valid.
func validate(t *testing.T, files ...string) {
	t.Helper()
	r := twasm(t, append([]string{"validate", "--json"}, files...)...)
	if r.code != 0 {
		t.Fatalf("validate %v: %v", files, r)
	}
	if !cmdtest.IsJSONLines(r.out) {
		t.Fatalf("validate --json: not JSON Lines: %s", r.out)
	}
}

// golden returns the path of a golden input.
func golden(provider, name string) string {
	return filepath.Join(root, "testdata", "golden", provider, name)
}

// example is the bundled Claude Code example stream.
func example() string { return filepath.Join(root, "examples", "claude", "stream-json.jsonl") }

// hangBound is how long a test waits for an event (a process to end, a
// line to appear) before it fails: it only bounds a hang, far above what
// the event takes however busy the machine, and far below a plugin time
// limit of an hour that a test shows a signal beat.
const hangBound = clitest.HangBound

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Settings of the fake agent, passed in its environment (twasm passes
// its environment on to the agent): what each does is said where
// fakeagent/main.go reads them.
const (
	fakeInput     = "FAKE_INPUT"
	fakeDelay     = "FAKE_DELAY"
	fakeGateAfter = "FAKE_GATE_AFTER"
	fakeGate      = "FAKE_GATE"
	fakeHangAfter = "FAKE_HANG_AFTER"
	fakeReady     = "FAKE_READY"
	fakeTrapInt   = "FAKE_TRAP_INT"
	fakeStderr    = "FAKE_STDERR"
	fakeExit      = "FAKE_EXIT"
	fakeIntRest   = "FAKE_INT_REST"
	fakeSigLog    = "FAKE_SIGLOG"
	fakeOrphan    = "FAKE_ORPHAN"
	fakeFlock     = "FAKE_FLOCK"
)

// fakeEnv returns the fake agent's settings as environment entries.
func fakeEnv(kv ...string) []string {
	var out []string
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, kv[i]+"="+kv[i+1])
	}
	return out
}
