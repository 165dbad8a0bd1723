package cmdutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/twasm/twasm/internal/cli/iostreams"
	"github.com/twasm/twasm/transcript"
)

// ByteMasker masks secrets in bytes (redact.Redactor).
type ByteMasker interface{ MaskBytes([]byte) []byte }

// WithInvocation returns an agent step's result with what was run added:
// "command", the wrapped command line as its argument vector, and "cwd",
// the working directory it ran in. Both are masked when m is set (an API
// key passed as a flag). Readers that do not know the two keys keep
// them as unknown fields.
func WithInvocation(res *transcript.AgentResult, argv []string, m ByteMasker) any {
	b, err := json.Marshal(res)
	if err != nil {
		return res
	}
	var out map[string]json.RawMessage
	if json.Unmarshal(b, &out) != nil {
		return res
	}
	mask := func(s string) string {
		if m == nil {
			return s
		}
		return string(m.MaskBytes([]byte(s)))
	}
	cmd := make([]string, len(argv))
	for i, a := range argv {
		cmd[i] = mask(a)
	}
	out["command"], _ = json.Marshal(cmd)
	if wd, err := os.Getwd(); err == nil {
		out["cwd"], _ = json.Marshal(mask(wd))
	}
	return out
}

// StdinNotice is what record says on stderr before it reads a terminal.
const StdinNotice = "twasm: reading the agent's output from the terminal (stdin): paste or type it, then press Ctrl-D on an empty line to end; Ctrl-C cancels. Use --input FILE or -- CMD to record a file or an agent."

// StdinInput is the reader record reads the provider's output from when
// no --input FILE is given. On a terminal, its first Read says on stderr
// that it is reading stdin and how to end it (when the run is ready for
// it, not before), and every Read gives up when ctx is done (Ctrl-C),
// which a read blocked on a terminal would not.
func StdinInput(ctx context.Context, ios *iostreams.IOStreams) io.Reader {
	if !ios.IsStdinTTY() {
		return ios.In
	}
	return &ctxReader{ctx: ctx, r: ios.In, notice: ios.ErrOut}
}

// ctxReader reads r in a goroutine so that Read can return when ctx is
// done. The goroutine of a cancelled read stays blocked in r until the
// process exits, which follows: it is used only for a terminal.
type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	notice  io.Writer // written StdinNotice before the first read
	pending chan readResult
}

type readResult struct {
	b   []byte
	err error
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.notice != nil {
		fmt.Fprintln(c.notice, StdinNotice)
		c.notice = nil
	}
	if c.pending == nil {
		c.pending = make(chan readResult, 1)
		go func() {
			buf := make([]byte, len(p))
			n, err := c.r.Read(buf)
			c.pending <- readResult{buf[:n], err}
		}()
	}
	select {
	case <-c.ctx.Done():
		return 0, c.ctx.Err()
	case res := <-c.pending:
		c.pending = nil
		n := copy(p, res.b)
		if n < len(res.b) {
			// p shrank since the read started: keep the rest.
			rest := res.b[n:]
			c.pending = make(chan readResult, 1)
			c.pending <- readResult{rest, res.err}
			return n, nil
		}
		return n, res.err
	}
}
