package views

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/twasm/twasm/transcript"
)

// FileChange is a file a tool call writes and how (the tool's name for
// a whole-file tool, "add", "update", "delete" for a patch or a change
// list, "diff" for a unified diff).
type FileChange struct {
	Path string `json:"path"`
	Op   string `json:"op"`
}

// patchFileLine and diffFileLine are compiled on first use, not when the
// process starts: every twasm command links this package.
var (
	patchFileLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\*\*\* (Add|Update|Delete) File: (.+)$`)
	})
	diffFileLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\+\+\+ b/(.+)$`) })
)

// ToolFiles returns the files a tool call writes, each once, in the order
// its input names them: a path argument of an edit or write tool
// (file_path, notebook_path, path, filename, target_file), a change list
// (codex file_change: a list of {path, kind} or an object keyed by path),
// the files of an apply_patch patch and the +++ lines of a unified diff,
// in the input or the command.
func ToolFiles(t *transcript.ToolPayload) []FileChange {
	var out []FileChange
	seen := map[string]int{}
	add := func(path, op string) {
		path = strings.TrimSpace(path)
		if path == "" {
			return
		}
		if i, ok := seen[path]; ok {
			out[i].Op = op
			return
		}
		seen[path] = len(out)
		out = append(out, FileChange{Path: path, Op: op})
	}
	var in map[string]json.RawMessage
	_ = json.Unmarshal(t.Input, &in)
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(in[k], &v)
		return v
	}
	op := strings.ToLower(t.Name)
	for _, k := range []string{"file_path", "notebook_path", "path", "filename", "target_file"} {
		if p := str(k); p != "" && (t.Kind == transcript.ToolEdit || strings.Contains(op, "write") || strings.Contains(op, "edit")) {
			add(p, op)
		}
	}
	if ch, ok := in["changes"]; ok {
		var list []struct {
			Path string `json:"path"`
			Kind any    `json:"kind"`
		}
		if json.Unmarshal(ch, &list) == nil {
			for _, c := range list {
				k := "change"
				if ks, ok := c.Kind.(string); ok {
					k = ks
				} else if km, ok := c.Kind.(map[string]any); ok {
					if tt, ok := km["type"].(string); ok {
						k = tt
					}
				}
				add(c.Path, k)
			}
		} else {
			var byPath map[string]json.RawMessage
			if json.Unmarshal(ch, &byPath) == nil {
				for _, p := range slices.Sorted(maps.Keys(byPath)) {
					add(p, "change")
				}
			}
		}
	}
	text := string(t.Input) + "\n" + t.Command
	if strings.Contains(text, "*** Begin Patch") {
		unq := strings.ReplaceAll(text, `\n`, "\n")
		for _, m := range patchFileLine().FindAllStringSubmatch(unq, -1) {
			add(strings.Trim(m[2], `"\`), strings.ToLower(m[1]))
		}
	}
	for _, m := range diffFileLine().FindAllStringSubmatch(strings.ReplaceAll(text, `\n`, "\n"), -1) {
		add(m[1], "diff")
	}
	return out
}
