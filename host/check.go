package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/sqlguard"
	"github.com/twasm/twasm/internal/wire"
)

// A signature is what the contract requires of a function.
type signature struct {
	params, results []api.ValueType
}

var (
	i32 = api.ValueTypeI32

	// requiredExports are the functions every plugin exports, with their
	// exact signatures (abi.go).
	requiredExports = []struct {
		name string
		sig  signature
	}{
		{wire.ExportInitialize, signature{nil, nil}},
		{wire.ExportVersion, signature{nil, []api.ValueType{i32}}},
		{wire.ExportBuffer, signature{[]api.ValueType{i32}, []api.ValueType{i32}}},
		{wire.ExportManifest, signature{nil, []api.ValueType{i32}}},
		{wire.ExportBegin, signature{[]api.ValueType{i32}, []api.ValueType{i32}}},
		{wire.ExportFeed, signature{[]api.ValueType{i32}, []api.ValueType{i32}}},
		{wire.ExportEnd, signature{nil, []api.ValueType{i32}}},
	}

	// hostFunctions are the functions of wire.HostModule.
	hostFunctions = map[string]signature{
		wire.ImportOutput: {[]api.ValueType{i32, i32}, nil},
		wire.ImportFail:   {[]api.ValueType{i32, i32}, nil},
		wire.ImportLog:    {[]api.ValueType{i32, i32, i32}, nil},
	}
)

func (s signature) String() string { return formatSig(s.params, s.results) }

func (s signature) matches(d api.FunctionDefinition) bool {
	return slices.Equal(s.params, d.ParamTypes()) && slices.Equal(s.results, d.ResultTypes())
}

// formatSig writes a signature the way error messages show it:
// "(i32, i32) -> ()", "() -> i32".
func formatSig(params, results []api.ValueType) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return strings.Join(s, ", ")
	}
	res := "(" + names(results) + ")"
	if len(results) == 1 {
		res = names(results)
	}
	return "(" + names(params) + ") -> " + res
}

// fsFunctions are the WASI functions that reach the file system (beyond
// writing to the already-open stdout and stderr, which fd_write allows).
var fsFunctions = map[string]bool{
	"fd_read": true, "fd_pread": true, "fd_pwrite": true, "fd_seek": true, "fd_tell": true,
	"fd_readdir": true, "fd_filestat_get": true, "fd_filestat_set_size": true,
	"fd_filestat_set_times": true, "fd_advise": true, "fd_allocate": true, "fd_datasync": true,
	"fd_sync": true, "fd_renumber": true, "fd_fdstat_set_rights": true,
}

// checkModule returns every way the compiled module departs from the
// contract, each as one sentence naming what is wrong and what is
// expected. An empty result means the module may be instantiated.
func checkModule(m wazero.CompiledModule) []string {
	var problems []string
	exports := m.ExportedFunctions()

	if _, ok := exports[wire.ExportMarker]; !ok {
		if major, ok := otherMarker(exports); ok {
			problems = append(problems, fmt.Sprintf("it was built for ABI major version %d (it exports twasm_abi_v%d); this host speaks %d", major, major, wire.Major))
		} else {
			problems = append(problems, fmt.Sprintf("it does not export %s: it is not a twasm plugin, or it was built for another ABI version", wire.ExportMarker))
		}
	}
	for _, e := range requiredExports {
		d, ok := exports[e.name]
		switch {
		case !ok && e.name == wire.ExportInitialize:
			hint := ""
			if _, ok := exports["_start"]; ok {
				hint = " (it exports _start: it is a command, not a reactor)"
			}
			problems = append(problems, "it does not export _initialize: build it as a WASI reactor (Go: -buildmode=c-shared)"+hint)
		case !ok:
			problems = append(problems, fmt.Sprintf("it does not export %s, which should be %s", e.name, e.sig))
		case !e.sig.matches(d):
			problems = append(problems, fmt.Sprintf("%s should be %s, not %s", e.name, e.sig, formatSig(d.ParamTypes(), d.ResultTypes())))
		}
	}
	if _, ok := m.ExportedMemories()["memory"]; !ok {
		problems = append(problems, `it does not export its memory as "memory"`)
	}
	if len(m.ImportedMemories()) > 0 {
		problems = append(problems, "it imports a memory: a plugin defines and exports its own")
	}
	return append(problems, checkImports(m.ImportedFunctions())...)
}

// otherMarker finds a twasm_abi_vN export with N other than wire.Major.
func otherMarker(exports map[string]api.FunctionDefinition) (int, bool) {
	for name := range exports {
		if rest, ok := strings.CutPrefix(name, "twasm_abi_v"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n != wire.Major {
				return n, true
			}
		}
	}
	return 0, false
}

func checkImports(imports []api.FunctionDefinition) []string {
	var problems, fsNames, netNames, otherWASI []string
	otherMajors := map[int]bool{}
	for _, d := range imports {
		module, name, _ := d.Import()
		switch {
		case module == wire.HostModule:
			want, ok := hostFunctions[name]
			if !ok {
				problems = append(problems, fmt.Sprintf("it imports %s.%s, which this host does not provide (it provides %s, %s and %s)",
					module, name, wire.ImportOutput, wire.ImportFail, wire.ImportLog))
			} else if !want.matches(d) {
				problems = append(problems, fmt.Sprintf("it imports %s.%s as %s; it should be %s",
					module, name, formatSig(d.ParamTypes(), d.ResultTypes()), want))
			}
		case module == wire.WASIModule:
			switch {
			case wire.WASIAllowed(name):
			case strings.HasPrefix(name, "path_") || fsFunctions[name]:
				fsNames = append(fsNames, name)
			case strings.HasPrefix(name, "sock_"):
				netNames = append(netNames, name)
			default:
				otherWASI = append(otherWASI, name)
			}
		case strings.HasPrefix(module, "twasm_v"):
			if n, err := strconv.Atoi(strings.TrimPrefix(module, "twasm_v")); err == nil && n != wire.Major {
				if !otherMajors[n] {
					problems = append(problems, fmt.Sprintf("it was built for ABI major version %d (it imports %s.%s); this host speaks %d", n, module, name, wire.Major))
				}
				otherMajors[n] = true
				continue
			}
			problems = append(problems, fmt.Sprintf("it imports %s.%s from module %q, which this host does not provide", module, name, module))
		default:
			problems = append(problems, fmt.Sprintf("it imports %s.%s from module %q, which this host does not provide (only %s and %s)", module, name, module, wire.HostModule, wire.WASIModule))
		}
	}
	if len(fsNames) > 0 {
		problems = append(problems, fmt.Sprintf("it imports %s %s: it reaches the file system, which a plugin never gets", wire.WASIModule, strings.Join(fsNames, ", ")))
	}
	if len(netNames) > 0 {
		problems = append(problems, fmt.Sprintf("it imports %s %s: it reaches the network, which a plugin never gets", wire.WASIModule, strings.Join(netNames, ", ")))
	}
	if len(otherWASI) > 0 {
		problems = append(problems, fmt.Sprintf("it imports %s %s, which a plugin may not use", wire.WASIModule, strings.Join(otherWASI, ", ")))
	}
	return problems
}

// checkVersion checks the value of twasm_abi_version.
func checkVersion(v uint32) error {
	major, minor := v>>16, v&0xffff
	if major != wire.Major {
		return fmt.Errorf("%w: it was built for ABI major version %d (version %d.%d); this host speaks %d",
			errContract, major, major, minor, wire.Major)
	}
	return nil
}

// parseManifest decodes and validates a manifest.
func parseManifest(b []byte) (abi.Manifest, error) {
	var m abi.Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("manifest is not valid JSON: %w", err)
	}
	if dec.More() {
		return m, fmt.Errorf("manifest has data after its JSON object")
	}
	var problems []string
	if !validName(m.Name) {
		problems = append(problems, fmt.Sprintf("name %q is empty or not printable", m.Name))
	}
	if strings.TrimSpace(m.Version) == "" {
		problems = append(problems, "version is empty")
	}
	if len(m.Providers) == 0 {
		problems = append(problems, "it lists no provider")
	}
	seen := map[string]bool{}
	for _, p := range m.Providers {
		if !validName(p) {
			problems = append(problems, fmt.Sprintf("provider %q is empty or not printable", p))
		}
		if seen[p] {
			problems = append(problems, fmt.Sprintf("provider %q is listed twice", p))
		}
		seen[p] = true
	}
	if len(m.Keys) > wire.MaxKeys {
		problems = append(problems, fmt.Sprintf("it declares %d keys, more than %d", len(m.Keys), wire.MaxKeys))
	}
	if len(m.Stores) > MaxStores {
		problems = append(problems, fmt.Sprintf("it declares %d stores, more than %d", len(m.Stores), MaxStores))
	}
	for i, st := range m.Stores {
		for _, p := range checkStore(st, seen) {
			problems = append(problems, fmt.Sprintf("store %d (%q): %s", i+1, st.Name, p))
		}
	}
	if len(problems) > 0 {
		return m, fmt.Errorf("manifest: %s", strings.Join(problems, "; "))
	}
	return m, nil
}

// MaxStores bounds the stores one manifest declares, MaxStoreFiles the
// files globs of one folder store.
const (
	MaxStores     = 64
	MaxStoreFiles = 64
)

// checkStore checks a declared store (ABI 1.4), untrusted input: every
// path it names must stay in the home directory or under the directory
// an environment variable names (no absolute path, no ".."), every
// variable name must be one, and its provider must be the plugin's. A
// kind this host does not know is not a problem here (a newer plugin's):
// sync reports the store as unsupported.
func checkStore(st abi.Store, providers map[string]bool) []string {
	var problems []string
	if !validName(st.Name) {
		problems = append(problems, "name is empty or not printable")
	}
	if st.Provider != "" && !providers[st.Provider] {
		problems = append(problems, fmt.Sprintf("provider %q is not one of the plugin's", st.Provider))
	}
	if len(st.Roots) == 0 {
		problems = append(problems, "it lists no root")
	}
	for _, r := range st.Roots {
		switch {
		case r.Projects && r.List != nil:
			problems = append(problems, "a root is either projects or a list")
		case r.Projects && (r.Env != "" || r.Path != ""):
			problems = append(problems, "a projects root names no env and no path (it is every project directory twasm knows)")
		case r.Projects && strings.Contains(st.Pattern, "**"):
			problems = append(problems, fmt.Sprintf("pattern %q of a projects root crosses directories (**): a project's tree is never walked", st.Pattern))
		case r.Projects:
		case r.Env != "" && !validEnvName(r.Env):
			problems = append(problems, fmt.Sprintf("root env %q is not a variable name", r.Env))
		case r.Env != "" && r.Path != "" && !relPath(r.Path):
			problems = append(problems, fmt.Sprintf("root path %q under $%s is not a relative path without ..", r.Path, r.Env))
		case r.Env == "" && r.Path != "~" && !(strings.HasPrefix(r.Path, "~/") && relPath(r.Path[2:])):
			problems = append(problems, fmt.Sprintf("root path %q is neither ~ nor ~/ followed by a relative path without .. (use env for anything else)", r.Path))
		}
		if l := r.List; l != nil && !r.Projects {
			// ABI 1.7: the list is a file in the root's directory, read
			// as JSON; its entries are the agent's own paths.
			if !relPath(l.File) {
				problems = append(problems, fmt.Sprintf("list file %q is not a relative path without ..", l.File))
			}
			if l.Field == "" || !validName(l.Field) || l.Array != "" && !validName(l.Array) {
				problems = append(problems, fmt.Sprintf("list field %q (array %q) is empty or not printable", l.Field, l.Array))
			}
			if l.Project != "" && !validName(l.Project) {
				// ABI 1.8: the member naming each entry's project.
				problems = append(problems, fmt.Sprintf("list project field %q is not printable", l.Project))
			}
		}
		if r.OS != "" && !validEnvName(r.OS) {
			problems = append(problems, fmt.Sprintf("root os %q is not a GOOS", r.OS))
		}
	}
	if st.UnlessEnv != "" && !validEnvName(st.UnlessEnv) {
		problems = append(problems, fmt.Sprintf("unless_env %q is not a variable name", st.UnlessEnv))
	}
	if st.Dir != "" && !relPath(st.Dir) {
		problems = append(problems, fmt.Sprintf("dir %q is not a relative path without ..", st.Dir))
	}
	if st.Pattern == "" || !relPath(strings.NewReplacer("*", "x", "?", "x").Replace(st.Pattern)) {
		problems = append(problems, fmt.Sprintf("pattern %q is empty, absolute or holds ..", st.Pattern))
	}
	if len(st.Files) > MaxStoreFiles {
		problems = append(problems, fmt.Sprintf("it lists %d files, more than %d", len(st.Files), MaxStoreFiles))
	}
	for _, g := range st.Files {
		if !relPath(strings.NewReplacer("*", "x", "?", "x").Replace(g)) {
			problems = append(problems, fmt.Sprintf("files glob %q is empty, absolute or holds ..", g))
		}
	}
	if (st.Kind == "folder" || st.Kind == abi.StoreKindTree) && len(st.Files) == 0 {
		problems = append(problems, fmt.Sprintf("a %s store lists no files", st.Kind))
	}
	switch {
	case st.Kind == abi.StoreKindSections && (st.SessionStart == "" || strings.ContainsAny(st.SessionStart, "\r\n")):
		problems = append(problems, fmt.Sprintf("a sections store's session_start %q is empty or holds a line end", st.SessionStart))
	case st.Kind != abi.StoreKindSections && st.SessionStart != "":
		problems = append(problems, fmt.Sprintf("session_start on a store of kind %q (sections only)", st.Kind))
	}
	if st.Parent != nil {
		switch {
		case st.Kind != "folder" && st.Kind != abi.StoreKindTree:
			problems = append(problems, fmt.Sprintf("a parent on a store of kind %q (folder and tree only)", st.Kind))
		case !slices.Contains(st.Files, st.Parent.File):
			problems = append(problems, fmt.Sprintf("parent file %q is not one of the store's files", st.Parent.File))
		case !validName(st.Parent.Member):
			problems = append(problems, fmt.Sprintf("parent member %q is not a name", st.Parent.Member))
		case st.Parent.Result != "" && (st.Kind != "folder" || strings.Count(st.Parent.Result, "{key}") != 1 || strings.ContainsAny(st.Parent.Result, "\r\n") || len(st.Parent.Result) > 256):
			// ABI 1.11: the line of the parent's result naming the session.
			problems = append(problems, fmt.Sprintf("parent result %q is not one line of at most 256 bytes holding {key} once, on a folder store", st.Parent.Result))
		case st.Parent.Prompt != nil && (st.Kind != "folder" || !slices.Contains(st.Files, st.Parent.Prompt.File) || !jsonPointer(st.Parent.Prompt.Record) || !jsonPointer(st.Parent.Prompt.Input) || st.Parent.Prompt.Name != "" && !validName(st.Parent.Prompt.Name)):
			// ABI 1.12: the session's file and its parent's call state the same prompt.
			problems = append(problems, fmt.Sprintf("parent prompt %+v is not one of the store's files, two JSON Pointers (and a tool's name), on a folder store", *st.Parent.Prompt))
		}
	}
	if _, glob := abi.SubAgentsGlob(st.SubAgents); st.SubAgents != "" && (st.Kind != "" && st.Kind != "file" || !relPath(strings.NewReplacer("{stem}", "x", "*", "x", "?", "x").Replace(glob))) {
		problems = append(problems, fmt.Sprintf("sub_agents %q is not a relative glob of a file store, without .. but at its start", st.SubAgents))
	}
	// A folder or tree store whose sessions name their parent may say
	// where a session names the call that started it too (Factory
	// Droid's session_start): beside the session's first file.
	if c := st.SubAgentCall; c != nil && (st.SubAgents == "" && st.Parent == nil || c.Key == "" || strings.Contains(c.File, "/") || !relPath(strings.ReplaceAll(c.File, "{stem}", "x"))) {
		problems = append(problems, fmt.Sprintf("sub_agent_call %+v is not a file name beside the sub-agent's file and a key, with sub_agents or parent", *c))
	}
	if p := st.SubAgentOf; p != nil {
		problems = append(problems, checkSubAgentOf(st.Kind, p)...)
	}
	// ABI 1.9: the sub-agents' directory named by the session's id, the
	// session's records naming the call that started each.
	if k := st.SubAgentsKey; k != nil && (st.SubAgents == "" || !strings.Contains(st.SubAgents, "{stem}") || !jsonPointer(k.Member) || k.Prefix < 0 || k.Prefix > 64) {
		problems = append(problems, fmt.Sprintf("sub_agents_key %+v is not a JSON Pointer to a member and a prefix of 0 to 64 characters, with sub_agents holding {stem}", *k))
	}
	if c := st.SubAgentCalls; c != nil && (st.SubAgents == "" || !jsonPointer(c.Calls) || !validName(c.Agent) || !validName(c.ID) ||
		c.AgentIn != "" && !jsonPointer(c.AgentIn) || c.Prefix != "" && (!validName(c.Prefix) || strings.ContainsAny(c.Prefix, `/\*?[`))) {
		problems = append(problems, fmt.Sprintf("sub_agent_calls %+v is not a JSON Pointer to a member and two names, with sub_agents (and a JSON Pointer agent_in, a file name's prefix)", *c))
	}
	// ABI 1.11: the sub-agent's file and its call state the same prompt.
	if p := st.SubAgentPrompt; p != nil && (st.SubAgents == "" || !jsonPointer(p.Record) || !jsonPointer(p.Input) || p.Name != "" && !validName(p.Name) || p.File != "") {
		problems = append(problems, fmt.Sprintf("sub_agent_prompt %+v is not two JSON Pointers (and a tool's name, no file), with sub_agents", *p))
	}
	if st.RetentionDays < 0 {
		problems = append(problems, "retention_days is negative")
	}
	if st.RetentionFile != "" && !relPath(st.RetentionFile) {
		problems = append(problems, fmt.Sprintf("retention_file %q is not a relative path without ..", st.RetentionFile))
	}
	return append(problems, checkSQLite(st)...)
}

// MaxSQLiteTables bounds the row queries of one SQLite store.
const MaxSQLiteTables = 16

// checkSQLite checks a SQLite store's queries (ABI 1.4): each one
// read-only SELECT (sqlguard), the columns named; a "sqlite" store
// without them, or queries on a store of another kind, are refused.
func checkSQLite(st abi.Store) []string {
	q := st.SQLite
	switch {
	case st.Kind == abi.StoreKindSQLite && q == nil:
		return []string{"a sqlite store declares no sqlite queries"}
	case q == nil:
		return nil
	case st.Kind != abi.StoreKindSQLite:
		return []string{fmt.Sprintf("sqlite queries on a store of kind %q", st.Kind)}
	}
	var problems []string
	if err := sqlguard.Check(q.Sessions); err != nil {
		problems = append(problems, fmt.Sprintf("sessions query: %v", err))
	}
	if n := q.Newer; n != nil {
		if err := sqlguard.Check(n.Sessions); err != nil {
			problems = append(problems, fmt.Sprintf("newer sessions query: %v", err))
		}
		if !validName(n.Table) {
			problems = append(problems, fmt.Sprintf("newer sessions query: table %q is no name", n.Table))
		}
	}
	if len(q.Schemas) > MaxSQLiteTables {
		problems = append(problems, fmt.Sprintf("it declares %d schemas (at most %d)", len(q.Schemas), MaxSQLiteTables))
	}
	for i, sc := range q.Schemas {
		// ABI 1.15: the first schema whose tables the database all has
		// chooses the sessions query.
		if err := sqlguard.Check(sc.Sessions); err != nil {
			problems = append(problems, fmt.Sprintf("schema %d: sessions query: %v", i+1, err))
		}
		if len(sc.Tables) == 0 || len(sc.Tables) > MaxSQLiteTables {
			problems = append(problems, fmt.Sprintf("schema %d names %d tables (1 to %d)", i+1, len(sc.Tables), MaxSQLiteTables))
		}
		for _, name := range sc.Tables {
			if !validName(name) {
				problems = append(problems, fmt.Sprintf("schema %d: table %q is no name", i+1, name))
			}
		}
	}
	if len(q.Tables) == 0 || len(q.Tables) > MaxSQLiteTables {
		problems = append(problems, fmt.Sprintf("it declares %d row queries (1 to %d)", len(q.Tables), MaxSQLiteTables))
	}
	for i, t := range q.Tables {
		if err := sqlguard.Check(t.Query); err != nil {
			problems = append(problems, fmt.Sprintf("row query %d: %v", i+1, err))
		}
		if !validName(t.Table) || t.Key == "" || t.Version == "" {
			problems = append(problems, fmt.Sprintf("row query %d needs table, key and version", i+1))
		}
		if t.IfTable != "" && !validName(t.IfTable) {
			problems = append(problems, fmt.Sprintf("row query %d: if_table %q is no name", i+1, t.IfTable))
		}
	}
	if len(q.Related) > MaxSQLiteTables {
		problems = append(problems, fmt.Sprintf("it declares %d related databases (at most %d)", len(q.Related), MaxSQLiteTables))
	}
	for i, r := range q.Related {
		// ABI 1.7: other databases of the agent beside the store's, read
		// as the store's (one read-only SELECT each).
		if err := sqlguard.Check(r.Query); err != nil {
			problems = append(problems, fmt.Sprintf("related query %d: %v", i+1, err))
		}
		if !validName(r.Table) || r.Key == "" {
			problems = append(problems, fmt.Sprintf("related query %d needs table and key", i+1))
		}
		if up, glob := abi.SubAgentsGlob(r.Glob); up > 2 || !relPath(strings.NewReplacer("*", "x", "?", "x").Replace(glob)) {
			problems = append(problems, fmt.Sprintf("related glob %q climbs more than two directories, is empty, absolute or holds ..", r.Glob))
		}
		if r.File != "" && (!relPath(r.File) || strings.Contains(r.File, "/")) {
			problems = append(problems, fmt.Sprintf("related file %q is not a name in the database's directory", r.File))
		}
	}
	return problems
}

// relPath reports whether p is a relative slash-separated path that stays
// below where it starts: not absolute, no "..", no "." or empty element,
// no backslash or volume name, no control character.
func relPath(p string) bool {
	if p == "" || len(p) > 1024 || strings.ContainsAny(p, "\\:") {
		return false
	}
	for _, el := range strings.Split(p, "/") {
		if el == "" || el == "." || el == ".." {
			return false
		}
		for _, r := range el {
			if !unicode.IsPrint(r) {
				return false
			}
		}
	}
	return true
}

// validEnvName reports whether s is an environment variable name
// (letters, digits and _, not starting with a digit) of at most 128 bytes.
func validEnvName(s string) bool {
	if s == "" || len(s) > 128 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func validName(s string) bool {
	if s == "" || len(s) > 128 || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// checkSubAgentOf checks how a file store's session names the session
// it is a sub-agent of (abi.Store.SubAgentOf): JSON Pointers into its
// first JSON value, the parent's file a relative glob whose last
// element holds "{key}" once.
func checkSubAgentOf(kind string, p *abi.SubAgentOf) []string {
	var problems []string
	if kind != "" && kind != "file" {
		problems = append(problems, fmt.Sprintf("sub_agent_of on a store of kind %q (file only)", kind))
	}
	if !jsonPointer(p.Member) {
		problems = append(problems, fmt.Sprintf("sub_agent_of member %q is not a JSON Pointer to a member", p.Member))
	}
	last := p.File[strings.LastIndexByte(p.File, '/')+1:]
	if strings.Count(p.File, "{key}") != 1 || !strings.Contains(last, "{key}") || !relPath(strings.NewReplacer("{key}", "x", "*", "x", "?", "x").Replace(p.File)) {
		problems = append(problems, fmt.Sprintf("sub_agent_of file %q is not a relative glob without .. whose last element holds {key} once", p.File))
	}
	for name, ptr := range p.Result {
		if !validName(name) || !jsonPointer(ptr) {
			problems = append(problems, fmt.Sprintf("sub_agent_of result %q: %q is not a name and a JSON Pointer to a member", name, ptr))
		}
	}
	return problems
}

// jsonPointer reports whether p is a JSON Pointer (RFC 6901) to a
// member: "/" then names, none empty, "~" only as "~0" or "~1".
func jsonPointer(p string) bool {
	if len(p) < 2 || p[0] != '/' || len(p) > 1024 {
		return false
	}
	for _, tok := range strings.Split(p[1:], "/") {
		if tok == "" || strings.Count(tok, "~") != strings.Count(tok, "~0")+strings.Count(tok, "~1") {
			return false
		}
	}
	return true
}
