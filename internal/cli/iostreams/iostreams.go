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
}

// System returns the process's streams. Color is on only when stdout is a
// terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not
// "dumb".
func System(getenv func(string) string) *IOStreams {
	tty := isTerminal(os.Stdout)
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, stdoutTTY: tty,
		color: tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"}
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

// SetColorEnabled overrides color detection.
func (s *IOStreams) SetColorEnabled(v bool) { s.color = v }

// Test returns streams backed by buffers: stdin, stdout and stderr. They
// are not a terminal and have no color until told otherwise.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}
