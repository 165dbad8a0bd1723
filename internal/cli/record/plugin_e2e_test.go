package record_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twasm/twasm/internal/testing/clitest"
	"github.com/twasm/twasm/transcript"
)

// proc_exit from a plugin, even with the code wazero uses for a cancelled
// context, is the plugin's fault: the lost line is counted and said, the
// run is not taken for a user's cancellation.
func TestProcExitIsThePluginsFault(t *testing.T) {
	t.Parallel()
	plugin := clitest.BuildPlugin(t, filepath.Join(clitest.Root, "host", "testdata", "misbehave"), "misbehave")
	storage := t.TempDir()
	r := clitest.RunInput(t, clitest.Plain(), []byte("emit before\nprocexit 4294967295\n"), "--storage", storage, "record", "--provider", "misbehave",
		"--plugin-path", filepath.Dir(plugin))
	if r.Code == 130 || strings.Contains(r.ErrOut, "interrupted") {
		t.Fatalf("taken for an interrupt: %v", r)
	}
	file := clitest.TranscriptPath(storage, clitest.OnlyRun(t, storage))
	evs := clitest.ReadRun(t, file)
	if st := clitest.RunEnd(t, evs).Status; st == transcript.StatusCancelled {
		t.Errorf("run status %q", st)
	}
	step, res := clitest.AgentResult(t, evs)
	if step.Status == transcript.StatusCancelled || step.Status == transcript.StatusOK || res.FailedLines == 0 ||
		!strings.Contains(strings.Join(res.Warnings, "\n"), "proc_exit") {
		t.Errorf("step %q, failed lines %d, warnings %q", step.Status, res.FailedLines, res.Warnings)
	}
	clitest.Validate(t, file)
}

// A plugin fault with --input, whose lines reach the plugin in batches of
// up to 64, loses the line that faulted and no other: the lines batched
// with it are sent again one at a time, as when lines arrive one by one,
// and the lost line is counted and said with the plugin's reason.
func TestRecordInputFaultLosesOneLine(t *testing.T) {
	t.Parallel()
	plugin := clitest.BuildPlugin(t, filepath.Join(clitest.Root, "host", "testdata", "misbehave"), "misbehave")
	for _, at := range []int{1, 20, 64} {
		t.Run(strconv.Itoa(at), func(t *testing.T) {
			t.Parallel()
			var in strings.Builder
			var want []string
			for i := 1; i <= 64; i++ {
				if i == at {
					in.WriteString("fatal line " + strconv.Itoa(i) + " is bad\n")
					continue
				}
				fmt.Fprintf(&in, "emit line %d\n", i)
				want = append(want, "line "+strconv.Itoa(i))
			}
			input := filepath.Join(t.TempDir(), "run.log")
			if err := os.WriteFile(input, []byte(in.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			storage := t.TempDir()
			r := clitest.Run(t, clitest.Plain(), "--storage", storage, "record", "--provider", "misbehave", "--input", input,
				"--plugin-path", filepath.Dir(plugin))
			file := clitest.TranscriptPath(storage, clitest.OnlyRun(t, storage))
			_, res := clitest.AgentResult(t, clitest.ReadRun(t, file))
			var got []string
			for _, w := range res.Warnings {
				if strings.HasPrefix(w, "line ") {
					got = append(got, w)
				}
			}
			if res.FailedLines != 1 || !slices.Equal(got, want) {
				t.Errorf("failed lines %d (want 1); records of %d innocent lines (want 63); exit %d\nwarnings %q", res.FailedLines, len(got), r.Code, res.Warnings)
			}
			if all := strings.Join(res.Warnings, "\n"); !strings.Contains(all, "1 line(s) lost") || !strings.Contains(all, "line "+strconv.Itoa(at)+" is bad") {
				t.Errorf("the lost line and its reason are not said: %q", res.Warnings)
			}
			clitest.Validate(t, file)
		})
	}
}

// An external plugin claiming a provider a bundled plugin serves does not
// take it, nor disable it: the bundled plugin records, and a warning names
// the file and --plugin-override, which makes the external one record.
func TestExternalPluginClaimingBundledProvider(t *testing.T) {
	t.Parallel()
	plugin := clitest.BuildPlugin(t, filepath.Join(clitest.Root, "internal", "testing", "e2e", "testdata", "impostor"), "impostor")
	for _, override := range []bool{false, true} {
		storage := t.TempDir()
		args := []string{"--storage", storage, "record", "--provider", "claude", "--input", clitest.Example(), "--plugin-path", filepath.Dir(plugin), "--json"}
		if override {
			args = append(args, "--plugin-override")
		}
		r := clitest.Run(t, clitest.Plain(), args...)
		if !override && r.Code != 0 {
			t.Fatalf("override %v: %v", override, r)
		}
		s := clitest.ParseRecordSummary(t, r.Out)
		switch {
		case !override && (s.Plugin == nil || s.Plugin.Name != "claude"):
			t.Errorf("without override, plugin %+v", s.Plugin)
		case !override && (!strings.Contains(r.ErrOut, plugin) || !strings.Contains(r.ErrOut, "--plugin-override")):
			t.Errorf("without override, no warning naming the file: %s", r.ErrOut)
		case override && (s.Plugin == nil || s.Plugin.Name != "impostor"):
			t.Errorf("with override, plugin %+v", s.Plugin)
		}
	}
}
