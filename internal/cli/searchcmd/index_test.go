package searchcmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twasm/twasm/internal/index"
	"github.com/twasm/twasm/internal/testing/cmdtest"
)

// twasm index brings the index up to date from the journal; --check
// finds what was written behind the journal's back.
func TestIndexCheck(t *testing.T) {
	env := cmdtest.New(t)
	run := func(argv string) index.Stats {
		t.Helper()
		env.Out.Reset()
		require.NoError(t, cmdtest.Parse(NewCmdIndex(env.F, nil), argv))
		var st index.Stats
		require.NoError(t, json.Unmarshal(env.Out.Bytes(), &st))
		return st
	}
	st := run("--json")
	require.NotZero(t, st.Indexed, "built from the fixture runs")
	ents, err := os.ReadDir(env.Dir)
	require.NoError(t, err)
	var some string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			some = filepath.Join(env.Dir, e.Name())
		}
	}
	b, err := os.ReadFile(some)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(some, append(b, []byte("not json\n")...), 0o600)) // behind the journal's back
	assert.Zero(t, run("--json").Indexed, "nothing the journal names")
	assert.Equal(t, 1, run("--check --json").Indexed)
}
