package iostreams

import (
	"bytes"
	"io"
	"os"
)

// IOStreams are a command's input and outputs. Data goes to Out,
// diagnostics to ErrOut.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdoutTTY bool
	color     bool
	errColor  bool
	stdinTTY  bool
}

// System returns the process's streams. Color is on only when stdout is a
// terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not
// "dumb".
func System(getenv func(string) string) *IOStreams {
	tty := isTerminal(os.Stdout)
	colorOK := getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, stdoutTTY: tty,
		color: tty && colorOK, errColor: tty && isTerminal(os.Stderr) && colorOK, stdinTTY: isTerminal(os.Stdin)}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// IsStdoutTTY reports whether Out is a terminal: commands print tables for
// people there and stable tab-separated lines in a pipe.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// SetStdoutTTY overrides terminal detection (tests, --no-tty style flags).
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }

// ColorEnabled reports whether output may carry ANSI colors.
func (s *IOStreams) ColorEnabled() bool { return s.color }

// ErrColorEnabled reports whether diagnostics on ErrOut (record --live)
// may carry ANSI colors: only when both stdout and stderr are terminals,
// so that neither a log stderr is redirected to nor one stdout is
// redirected to (with 2>&1) gets escape codes.
func (s *IOStreams) ErrColorEnabled() bool { return s.errColor }

// IsStdinTTY reports whether In is a terminal: record then says it is
// reading stdin and how to end it.
func (s *IOStreams) IsStdinTTY() bool { return s.stdinTTY }

// SetStdinTTY overrides terminal detection of stdin (tests).
func (s *IOStreams) SetStdinTTY(v bool) { s.stdinTTY = v }

// SetColorEnabled overrides color detection.
func (s *IOStreams) SetColorEnabled(v bool) { s.color = v }

// Test returns streams backed by buffers: stdin, stdout and stderr. They
// are not a terminal and have no color until told otherwise.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
