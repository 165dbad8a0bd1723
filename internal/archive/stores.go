package archive

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twasm/twasm/abi"
	"github.com/twasm/twasm/internal/regfile"
)

// Location is one native session store of an agent.
type Location struct {
	// Provider is the provider its sessions are normalized as.
	Provider string `json:"provider"`
	// Plugin is the plugin that declared the store ("" for the config
	// file's).
	Plugin string `json:"plugin,omitempty"`
	// Name says which store it is ("Claude Code projects").
	Name string `json:"name"`
	// Kind is the kind of source ("file", "folder", "tree" or "sqlite").
	Kind string `json:"kind"`
	// Dir is the directory walked.
	Dir string `json:"dir"`
	// Match decides which files under Dir are sessions (a path relative
	// to Dir, slash-separated).
	Match func(rel string) bool `json:"-"`
	// Pattern describes Match for people (a glob).
	Pattern string `json:"pattern"`
	// Files (a folder store) are the globs of a session directory's
	// files, in the order they are read (abi.Store.Files).
	Files []string `json:"files,omitempty"`
	// From says where Dir came from: the default, an environment
	// variable, or the config file.
	From string `json:"from"`
	// RetentionDays is how long the agent keeps a session before
	// deleting it, when it does (0: it does not, as far as known);
	// RetentionKey the setting that changes it, when there is one.
	RetentionDays int    `json:"retention_days,omitempty"`
	RetentionKey  string `json:"retention_key,omitempty"`
	// SourceFacts says the plugin asked for a facts line before each
	// session's bytes (abi.SourceFacts).
	SourceFacts bool `json:"source_facts,omitempty"`
	// SQLite is what to read of a store of kind "sqlite" (the database
	// files Match finds): the plugin's declared queries.
	SQLite *abi.SQLiteSource `json:"-"`
	// Parent (a folder or tree store) says where a session names the
	// session it was started from (abi.Store.Parent).
	Parent *abi.StoreParent `json:"-"`
	// SubAgents (a file store) is the glob of a session's sub-agent
	// files, relative to the session file's directory, "{stem}" its name
	// without extension (abi.Store.SubAgents); subAgents is its regular
	// expression, the stem captured, below the directory subAgentsUp
	// levels above the session file's (abi.SubAgentsGlob).
	SubAgents   string         `json:"sub_agents,omitempty"`
	subAgents   *regexp.Regexp `json:"-"`
	subAgentsUp int
	// SubAgentCall says where a sub-agent file's starting call is named
	// (abi.Store.SubAgentCall), or a folder or tree store's session that
	// names its parent (Parent) names the call that started it.
	SubAgentCall *abi.SidecarKey `json:"sub_agent_call,omitempty"`
	// SubAgentResult says how the result of a sub-agent's call names it
	// (abi.Store.SubAgentResult).
	SubAgentResult string `json:"sub_agent_result,omitempty"`
	// SubAgentsKey says "{stem}" in SubAgents stands for the id a
	// session file states, not its name (abi.Store.SubAgentsKey,
	// sessionkey.go).
	SubAgentsKey *abi.SessionKey `json:"sub_agents_key,omitempty"`
	// SubAgentCalls says where the session's records name the call that
	// started a sub-agent (abi.Store.SubAgentCalls, sessionkey.go).
	SubAgentCalls *abi.RecordCalls `json:"sub_agent_calls,omitempty"`
	// SubAgentPrompt says how a sub-agent's file and the call that
	// started it state the same prompt (abi.Store.SubAgentPrompt,
	// prompt.go).
	SubAgentPrompt *abi.PromptMatch `json:"sub_agent_prompt,omitempty"`
	// SubAgentOf (a file store) says how a session file names the
	// session file it is a sub-agent of (abi.Store.SubAgentOf,
	// subagent_of.go).
	SubAgentOf *abi.SubAgentOf `json:"sub_agent_of,omitempty"`
	// Project is the project directory the store's place names, handed
	// to the plugin in each session's facts line (abi.SourceFacts.Project,
	// ABI 1.8): the project directory of a store in every project
	// (abi.Root.Projects), or the project the list entry that named the
	// directory names (abi.RootList.Project); "" where the place says
	// nothing.
	Project string `json:"project,omitempty"`
	// SessionStart (a sections store) is the prefix of the line that
	// starts a session in a file (abi.Store.SessionStart).
	SessionStart string `json:"session_start,omitempty"`
	// Keyed (abi.StoreSessionKey) says a session file's name without its
	// extension (a file store) or a session's key (a SQLite store) is
	// the key another SQLite store of the same provider keeps the same
	// session under, whose copy is the one archived (keyed.go).
	Keyed bool `json:"keyed,omitempty"`
	// Unusable says why this twasm cannot read the store (a kind it does
	// not know, a pattern that does not parse, a list of its directories
	// missing or malformed); it is listed, not walked.
	Unusable string `json:"unusable,omitempty"`
	// Notes are warnings about how the store was found (an entry of its
	// list that names no directory); Scan reports them.
	Notes []string `json:"-"`
	// listed says the directory came from a list (abi.Root.List): a
	// file another store already found is not read again through it.
	listed bool
}

// Key tells stores apart: by name and directory, since two stores may
// share a directory (Goose's database and its older session files).
func (l *Location) Key() string { return l.Name + "\x00" + l.Dir }

// Declared is a store a plugin declares in its manifest (abi.Store), with
// the provider it is read as and the plugin's name.
type Declared struct {
	abi.Store
	Provider    string
	Plugin      string
	SourceFacts bool
}

// Places says where a declared store's directory is looked for on goos,
// as Discover looks: the variables that override the default (each with
// the path below it), and the default. On one OS there is at most one
// default and only the variables tried before it; with goos "" (every OS)
// the default is given once for every OS and once per OS that has its
// own. Roots keep their OS so that a listing can say which applies where.
// `sync --help` and the README's table of stores both list stores from it.
func (d Declared) Places(goos string) (defaults, overrides []abi.Root) {
	return d.places(goos, false)
}

// Lists says where a declared store's lists of directories are looked
// for (abi.Root.List), as Places says where its directory is.
func (d Declared) Lists(goos string) (defaults, overrides []abi.Root) {
	return d.places(goos, true)
}

func (d Declared) places(goos string, lists bool) (defaults, overrides []abi.Root) {
	shadowed := func(r abi.Root) bool { // an earlier default wins where r applies
		for _, def := range defaults {
			if goos != "" || def.OS == "" || def.OS == r.OS {
				return true
			}
		}
		return false
	}
	for _, r := range d.Roots {
		switch {
		case r.Projects: // not a directory of its own (ProjectsRoot)
		case (r.List != nil) != lists:
		case goos != "" && r.OS != "" && r.OS != goos:
		case shadowed(r):
		case r.Env != "":
			overrides = append(overrides, r)
		default:
			defaults = append(defaults, r)
		}
	}
	return defaults, overrides
}

// Env reads the environment (tests pass a map).
type Env func(string) string

// Config is the user's sync configuration file (JSON): stores beyond the
// bundled ones, for example an old home directory or a copied backup.
//
//	{"stores": [{"provider": "claude", "dir": "/mnt/old/.claude/projects", "pattern": "**/*.jsonl"}]}
type Config struct {
	Stores []ConfigStore `json:"stores"`
	// Projects are project directories (absolute, or under ~/) in which
	// the stores of a projects root (abi.Root.Projects: Aider's history
	// in each repository) are looked for, beside those of the runs
	// twasm archived (Seen).
	Projects []string `json:"projects,omitempty"`
	// Seen are the project directories of the runs twasm archived (not
	// read from the file: the caller adds them).
	Seen []string `json:"-"`
}

// ConfigStore is one extra store.
type ConfigStore struct {
	Provider string `json:"provider"`
	Dir      string `json:"dir"`
	// Pattern is a glob matched against the path below Dir: "*" stays in
	// one directory, "**/" crosses any number. Default "**/*.jsonl".
	Pattern string `json:"pattern,omitempty"`
	Name    string `json:"name,omitempty"`
}

// LoadConfig reads a config file; a missing file, or none ("": no
// configuration directory is known), is an empty config unless required
// (given explicitly).
func LoadConfig(path string, required bool) (*Config, error) {
	if path == "" && !required {
		return &Config{}, nil
	}
	b, err := regfile.ReadFile(path, regfile.MaxConfig)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sync config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("sync config %s: %w", path, err)
	}
	for i, s := range c.Stores {
		if s.Provider == "" || s.Dir == "" {
			return nil, fmt.Errorf("sync config %s: store %d needs provider and dir", path, i+1)
		}
		if s.Dir != "~" && !strings.HasPrefix(s.Dir, "~/") && !filepath.IsAbs(s.Dir) {
			// Relative to what? The directory sync happens to run in
			// would make the store come and go.
			return nil, fmt.Errorf("sync config %s: store %d: dir %q is relative: give an absolute path or one under ~/", path, i+1, s.Dir)
		}
		if _, err := globRegexp(cmp.Or(s.Pattern, "**/*.jsonl")); err != nil {
			return nil, fmt.Errorf("sync config %s: store %d: %w", path, i+1, err)
		}
	}
	for i, p := range c.Projects {
		if p != "~" && !strings.HasPrefix(p, "~/") && !filepath.IsAbs(p) {
			return nil, fmt.Errorf("sync config %s: project %d: %q is relative: give an absolute path or one under ~/", path, i+1, p)
		}
	}
	return &c, nil
}

// DeclaredOf returns the stores a plugin's manifest declares, each with
// its provider (its own, else the plugin's first).
func DeclaredOf(m abi.Manifest) []Declared {
	var out []Declared
	for _, st := range m.Stores {
		prov := st.Provider
		if prov == "" && len(m.Providers) > 0 {
			prov = m.Providers[0]
		}
		out = append(out, Declared{Store: st, Provider: prov, Plugin: m.Name, SourceFacts: m.SourceFacts})
	}
	return out
}

// KindFile is the kind of a store whose sessions are files (JSON Lines
// appended to, or a .json document rewritten whole), the default.
const KindFile = "file"

// Discover lists the native session stores the plugins declare (the
// declared order), resolved for goos and the environment, then the
// config's. Stores that do not exist are listed too: doctor says so. A
// declared store none of whose roots applies (its variable unset, another
// OS) or whose UnlessEnv is set is not listed.
func Discover(env Env, goos string, declared []Declared, cfg *Config) []Location {
	home := env("HOME")
	var locs []Location
	for _, d := range declared {
		if d.UnlessEnv != "" && env(d.UnlessEnv) != "" {
			continue
		}
		// Its patterns are compiled once, whatever the number of its
		// locations (one per project directory for a projects root).
		c := compileStore(d)
		if projectsRoot(d.Roots) {
			for _, p := range projectDirs(cfg, home) {
				loc := declaredLocation(d, c, p, "project")
				loc.Project = p
				locs = append(locs, loc)
			}
		}
		if root, from, _, ok := resolveRoot(env, goos, home, d.Roots, false); ok {
			locs = append(locs, declaredLocation(d, c, root, from))
		}
		if root, from, r, ok := resolveRoot(env, goos, home, d.Roots, true); ok {
			locs = append(locs, listedLocations(d, c, root, from, r.List, home, locs)...)
		}
	}
	if cfg != nil {
		for _, s := range cfg.Stores {
			pat := cmp.Or(s.Pattern, "**/*.jsonl")
			re, _ := globRegexp(pat)
			locs = append(locs, Location{Provider: s.Provider, Name: cmp.Or(s.Name, s.Provider+" (config)"), Kind: KindFile, Dir: expandHome(s.Dir, home),
				Pattern: pat, Match: re.MatchString, From: "config"})
		}
	}
	return locs
}

// ProjectsRoot reports whether a declared store is looked for in every
// project directory (abi.Root.Projects), as `sync --help` and the
// README's table say.
func (d Declared) ProjectsRoot() bool { return projectsRoot(d.Roots) }

// projectsRoot reports whether a store's roots are the project
// directories (abi.Root.Projects).
func projectsRoot(roots []abi.Root) bool {
	return slices.ContainsFunc(roots, func(r abi.Root) bool { return r.Projects })
}

// projectDirs are the project directories a projects root stands for:
// the config's, then those of the runs archived, each once, cleaned.
func projectDirs(cfg *Config, home string) []string {
	if cfg == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range append(slices.Clone(cfg.Projects), cfg.Seen...) {
		p = filepath.Clean(expandHome(p, home))
		if !filepath.IsAbs(p) || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// compiledStore is what declaredLocation makes of a declared store
// whatever its root: its pattern's regular expression, its sub-agents'
// (with how far their glob climbs), or why they do not parse.
type compiledStore struct {
	re, subAgents *regexp.Regexp
	match         func(string) bool // re's, as globMatcher answers it
	subAgentsUp   int
	err           error
}

// compileStore compiles a declared store's patterns (compiledStore).
func compileStore(d Declared) compiledStore {
	var c compiledStore
	kind := cmp.Or(d.Kind, KindFile)
	c.re, c.err = globRegexp(d.Pattern)
	if c.err == nil {
		c.match = globMatcher(d.Pattern, c.re)
	}
	if c.err == nil && kind == KindFolder {
		c.err = checkFolderFiles(d.Files)
	}
	if c.err == nil && kind == KindTree {
		c.err = checkTreeFiles(d.Files)
	}
	if c.err == nil && d.SubAgents != "" && kind == KindFile {
		var glob string
		c.subAgentsUp, glob = abi.SubAgentsGlob(d.SubAgents)
		c.subAgents, c.err = subAgentRegexp(glob)
	}
	if c.err == nil && d.SubAgentOf != nil && kind == KindFile {
		c.err = checkSubAgentOf(d.SubAgentOf.File)
	}
	return c
}

// declaredLocation is a declared store resolved at root (from says
// where the root came from); c is compileStore(d).
func declaredLocation(d Declared, c compiledStore, root, from string) Location {
	loc := Location{Provider: d.Provider, Plugin: d.Plugin, Name: d.Name, Kind: cmp.Or(d.Kind, KindFile),
		Dir: filepath.Join(root, filepath.FromSlash(d.Dir)), Pattern: d.Pattern, From: from,
		RetentionDays: d.RetentionDays, RetentionKey: d.RetentionKey, SourceFacts: d.SourceFacts, SQLite: d.SQLite, Files: slices.Clone(d.Files), Parent: d.Parent, SessionStart: d.SessionStart,
		Keyed: d.Session == abi.StoreSessionKey && (d.Kind == "" || d.Kind == KindFile || d.Kind == abi.StoreKindSQLite)}
	if d.RetentionFile != "" && d.RetentionKey != "" {
		loc.RetentionDays = retentionSetting(filepath.Join(root, filepath.FromSlash(d.RetentionFile)), d.RetentionKey, d.RetentionDays)
	}
	err := c.err
	if err == nil && d.SubAgents != "" && loc.Kind == KindFile {
		loc.SubAgents, loc.SubAgentCall, loc.SubAgentResult = d.SubAgents, d.SubAgentCall, d.SubAgentResult
		loc.SubAgentsKey, loc.SubAgentCalls, loc.SubAgentPrompt = d.SubAgentsKey, d.SubAgentCalls, d.SubAgentPrompt
		loc.subAgentsUp, loc.subAgents = c.subAgentsUp, c.subAgents
	}
	if err == nil && d.SubAgentOf != nil && loc.Kind == KindFile {
		loc.SubAgentOf = d.SubAgentOf
	}
	if d.Parent != nil && (loc.Kind == KindFolder || loc.Kind == KindTree) {
		// Where a sub-agent's session names the call that started it
		// (Factory Droid's session_start): parentLink.
		loc.SubAgentCall = d.SubAgentCall
	}
	switch {
	case loc.Kind == abi.StoreKindSQLite && d.SQLite == nil:
		loc.Unusable = fmt.Sprintf("plugin %s: a sqlite store without queries", d.Plugin)
	case loc.Kind == KindSections && d.SessionStart == "":
		loc.Unusable = fmt.Sprintf("plugin %s: a sections store without session_start", d.Plugin)
	case loc.Kind != KindFile && loc.Kind != KindFolder && loc.Kind != KindTree && loc.Kind != abi.StoreKindSQLite && loc.Kind != KindSections:
		loc.Unusable = fmt.Sprintf("store kind %q is not one this twasm reads (plugin %s): upgrade twasm", loc.Kind, d.Plugin)
	case err != nil:
		loc.Unusable = fmt.Sprintf("plugin %s: %v", d.Plugin, err)
	default:
		loc.Match = c.match
	}
	return loc
}

// resolveRoot returns the first root that applies, of the list roots
// (abi.Root.List) or of the others: on goos (or every OS), its variable
// set (or none named). from says which ("$VAR" or "default").
func resolveRoot(env Env, goos, home string, roots []abi.Root, lists bool) (dir, from string, root abi.Root, ok bool) {
	for _, r := range roots {
		if r.OS != "" && r.OS != goos || r.Projects || (r.List != nil) != lists {
			continue
		}
		if r.Env != "" {
			v := env(r.Env)
			if v == "" {
				continue
			}
			return filepath.Join(v, filepath.FromSlash(r.Path)), "$" + r.Env, r, true
		}
		if home == "" {
			continue
		}
		return expandHome(r.Path, home), "default", r, true
	}
	return "", "", abi.Root{}, false
}

// listedLocations are a declared store in each directory its list names
// (abi.Root.List): the JSON file l.File in root, read here, read-only.
// Each entry's l.Field must be an absolute path (or one under ~/); an
// entry that is not is a note, a directory listed twice is one store. A
// list that is missing while its directory exists, or that does not
// parse, is one unusable location saying so (doctor and sync warn); a
// list whose directory does not exist is a store not found, as any.
func listedLocations(d Declared, c compiledStore, root, from string, l *abi.RootList, home string, before []Location) []Location {
	path := filepath.Join(root, filepath.FromSlash(l.File))
	from = "list (" + from + ")"
	failed := func(format string, args ...any) []Location {
		loc := declaredLocation(d, c, root, from)
		loc.Dir, loc.Pattern = root, l.File
		loc.Match = func(string) bool { return false } // the list is no session
		if format != "" {
			loc.Unusable = fmt.Sprintf("the list of its directories, %s: ", path) + fmt.Sprintf(format, args...)
		}
		return []Location{loc}
	}
	b, err := regfile.ReadFile(path, regfile.MaxConfig)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, serr := os.Stat(root); serr != nil {
			return failed("") // the agent's directory is not there: not found
		}
		return failed("not found: no directory of it is read")
	case err != nil:
		return failed("%v", err)
	}
	dirs, notes, err := listDirs(b, l, home)
	if err != nil {
		return failed("%v: no directory of it is read", err)
	}
	if len(dirs) == 0 && len(notes) > 0 {
		return failed("%s", strings.Join(notes, "; "))
	}
	var out []Location
	for _, dir := range dirs {
		loc := declaredLocation(d, c, dir.dir, from)
		loc.listed, loc.Project = true, dir.project
		if slices.ContainsFunc(before, func(o Location) bool { return o.Key() == loc.Key() }) {
			continue
		}
		out = append(out, loc)
	}
	if len(out) > 0 {
		for i := range notes {
			notes[i] = path + ": " + notes[i]
		}
		out[0].Notes = notes
	}
	return out
}

// listedDir is a directory a list names, with the project its entry
// names (abi.RootList.Project; "" when it names none, or when entries
// naming the same directory name different projects).
type listedDir struct{ dir, project string }

// listDirs are the directories a list names (abi.RootList): each
// object's l.Field in the array l.Array (the document, when empty),
// cleaned, each once, in the list's order, with its entry's l.Project;
// notes say which entries name none.
func listDirs(b []byte, l *abi.RootList, home string) (dirs []listedDir, notes []string, err error) {
	var items []json.RawMessage
	if l.Array == "" {
		err = json.Unmarshal(b, &items)
	} else {
		var doc map[string]json.RawMessage
		if err = json.Unmarshal(b, &doc); err == nil {
			if _, ok := doc[l.Array]; !ok {
				return nil, nil, fmt.Errorf("no member %q", l.Array)
			}
			err = json.Unmarshal(doc[l.Array], &items)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("not a JSON list: %w", err)
	}
	seen := map[string]int{}    // index in dirs
	shared := map[string]bool{} // named with different projects
	for i, it := range items {
		var obj map[string]json.RawMessage
		var dir string
		if json.Unmarshal(it, &obj) != nil || json.Unmarshal(obj[l.Field], &dir) != nil || dir == "" {
			notes = append(notes, fmt.Sprintf("entry %d has no %q string", i+1, l.Field))
			continue
		}
		p, ok := absPath(dir, home)
		if !ok {
			notes = append(notes, fmt.Sprintf("entry %d: %q is not an absolute path", i+1, dir))
			continue
		}
		project := ""
		if l.Project != "" {
			var named string
			if json.Unmarshal(obj[l.Project], &named) == nil && named != "" {
				if project, ok = absPath(named, home); !ok {
					project = ""
					notes = append(notes, fmt.Sprintf("entry %d: its %q %q is not an absolute path: its sessions get no project", i+1, l.Project, named))
				}
			}
		}
		k, ok := seen[p]
		switch {
		case !ok:
			seen[p] = len(dirs)
			dirs = append(dirs, listedDir{dir: p, project: project})
		case project == "" || shared[p]:
		case dirs[k].project == "":
			dirs[k].project = project
		case dirs[k].project != project:
			// Two projects keep their data in one directory: which of
			// them a session is cannot be told.
			notes = append(notes, fmt.Sprintf("entry %d names %s again with another %q: its sessions get no project", i+1, p, l.Project))
			dirs[k].project, shared[p] = "", true
		}
	}
	return dirs, notes, nil
}

// absPath is p cleaned, "~/" expanded, when that is an absolute path.
func absPath(p, home string) (string, bool) {
	c := filepath.Clean(expandHome(p, home))
	return c, filepath.IsAbs(c) && !strings.ContainsRune(p, 0)
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// retentionSetting reads the top-level number key of the JSON settings
// file at path (Claude Code's cleanupPeriodDays), else def.
func retentionSetting(path, key string, def int) int {
	b, err := regfile.ReadFile(path, regfile.MaxConfig)
	if err != nil {
		return def
	}
	var s map[string]json.RawMessage
	if json.Unmarshal(b, &s) != nil || s[key] == nil {
		return def
	}
	var n json.Number
	if json.Unmarshal(s[key], &n) != nil {
		return def
	}
	v, err := strconv.Atoi(n.String())
	if err != nil || v < 0 {
		return def
	}
	return v
}

// globRegexp turns a glob ("**/" any directories, "*" and "?" within one
// name, "[...]" a class) into a regexp over slash-separated paths.
func globRegexp(glob string) (*regexp.Regexp, error) {
	body, err := globBody(glob)
	if err != nil {
		return nil, err
	}
	return regexp.Compile("^" + body + "$")
}

// globMatcher answers what re, globRegexp(glob), matches: by the glob's
// own tokens for a path of printable ASCII when the glob is of ASCII
// and holds no class ("[...]"), by re otherwise. Every file a store's
// walk finds is matched: the regexp's backtracking was 4% of the CPU
// of a re-sync with nothing new (2,000 sessions).
func globMatcher(glob string, re *regexp.Regexp) func(string) bool {
	toks, ok := globTokens(glob)
	if !ok {
		return re.MatchString
	}
	return func(p string) bool {
		for i := 0; i < len(p); i++ {
			if p[i] < 0x20 || p[i] >= 0x7f {
				return re.MatchString(p)
			}
		}
		return matchTokens(toks, p)
	}
}

// globToken is a part of a glob: a literal, "*", "?", "**/" or a
// "{a,b}" of literals (kind 'l', '*', '?', 'D', '{').
type globToken struct {
	kind byte
	lit  string
	alts []string
}

// globTokens cuts a glob as globBody reads it; ok is false for a glob
// globMatcher leaves to the regexp (a class, a byte not printable
// ASCII) or one globBody refuses.
func globTokens(glob string) (toks []globToken, ok bool) {
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c < 0x20 || c >= 0x7f || c == '[':
			return nil, false
		case strings.HasPrefix(glob[i:], "**/"):
			toks = append(toks, globToken{kind: 'D'})
			i += 2
		case c == '*' || c == '?':
			toks = append(toks, globToken{kind: c})
		case c == '{':
			j := strings.IndexByte(glob[i:], '}')
			if j < 0 {
				return nil, false
			}
			alts := strings.Split(glob[i+1:i+j], ",")
			for _, a := range alts {
				if strings.ContainsAny(a, "*?[{/") {
					return nil, false
				}
			}
			toks = append(toks, globToken{kind: '{', alts: alts})
			i += j
		default:
			if n := len(toks); n > 0 && toks[n-1].kind == 'l' {
				toks[n-1].lit += string(c)
			} else {
				toks = append(toks, globToken{kind: 'l', lit: string(c)})
			}
		}
	}
	return toks, true
}

// matchTokens reports whether toks match all of p, a path of printable
// ASCII: "*" any run of bytes but '/', "?" one such byte, "**/" nothing
// or any run ending with '/', an alternative one of its literals.
func matchTokens(toks []globToken, p string) bool {
	for len(toks) > 0 {
		t := toks[0]
		toks = toks[1:]
		switch t.kind {
		case 'l':
			if !strings.HasPrefix(p, t.lit) {
				return false
			}
			p = p[len(t.lit):]
		case '?':
			if p == "" || p[0] == '/' {
				return false
			}
			p = p[1:]
		case '*':
			for i := 0; ; i++ {
				if matchTokens(toks, p[i:]) {
					return true
				}
				if i == len(p) || p[i] == '/' {
					return false
				}
			}
		case 'D':
			if matchTokens(toks, p) {
				return true
			}
			for i := 0; i < len(p); i++ {
				if p[i] == '/' && matchTokens(toks, p[i+1:]) {
					return true
				}
			}
			return false
		case '{':
			for _, a := range t.alts {
				if strings.HasPrefix(p, a) && matchTokens(toks, p[len(a):]) {
					return true
				}
			}
			return false
		}
	}
	return p == ""
}

// checkGlob reports what globRegexp would say of a glob, without
// compiling it (a declared store's files globs are compiled where they
// are used; checking them was most of what Discover allocated).
func checkGlob(glob string) error {
	body, err := globBody(glob)
	if err != nil {
		return err
	}
	_, err = syntax.Parse("^"+body+"$", syntax.Perl)
	return err
}

// globBody is the unanchored regular expression of a glob.
func globBody(glob string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				return "", fmt.Errorf("pattern %q: unclosed [", glob)
			}
			b.WriteString(glob[i : i+j+1])
			i += j
		case c == '{':
			j := strings.IndexByte(glob[i:], '}')
			if j < 0 {
				return "", fmt.Errorf("pattern %q: unclosed {", glob)
			}
			alts := strings.Split(glob[i+1:i+j], ",")
			for k, a := range alts {
				// An alternative is a glob within one name: "*", "?"
				// and a class (holding no ',' or '}') but no "{", "/"
				// or "**" (the Kimi CLI's <uuid>{,_sub_[0-9],...}).
				if strings.ContainsAny(a, "{/") || strings.Contains(a, "**") {
					return "", fmt.Errorf("pattern %q: an alternative of {...} is within one name, without {...} or **", glob)
				}
				body, err := globBody(a)
				if err != nil {
					return "", err
				}
				alts[k] = body
			}
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String(), nil
}

// Session is one session file found in a store.
type Session struct {
	Loc     *Location
	Path    string
	Size    int64
	ModTime time.Time
	// Parent, for a sub-agent's file (Location.SubAgents, or a file
	// that names its session, Location.SubAgentOf), is the session file
	// whose sub-agent it is.
	Parent string
}

// ErrStoreMissing is wrapped when a store directory does not exist.
var ErrStoreMissing = errors.New("store not found")

// Walk lists the session files of a location, sorted by path. A store
// that does not exist returns ErrStoreMissing; a directory that vanishes
// or cannot be read while walking is reported in problems, and the walk
// goes on.
func Walk(loc *Location) (sessions []Session, problems []string, err error) {
	st, err := os.Stat(loc.Dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", loc.Dir, ErrStoreMissing)
		}
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s: not a directory", loc.Dir)
	}
	if lst, err := os.Lstat(loc.Dir); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		return walkLinked(loc)
	}
	return walkKind(loc)
}

// walkKind lists a location by its kind of store.
func walkKind(loc *Location) (sessions []Session, problems []string, err error) {
	switch loc.Kind {
	case KindSections:
		return walkSections(loc)
	case KindFolder:
		return walkFolders(loc)
	case KindTree:
		return walkTree(loc)
	}
	return walkFiles(loc)
}

// walksNoLinks reports whether loc's walk follows no link below its
// directory: walkFiles (a file store's, a database store's) opens each
// directory without following a link and takes regular files only; the
// others look files up by globs, which follow links.
func walksNoLinks(loc *Location) bool {
	switch loc.Kind {
	case KindSections, KindFolder, KindTree:
		return false
	}
	return true
}

// walkLinked lists a store whose own directory is a link to a directory
// (~/.codex/sessions moved to another disk and linked back, say): the
// walk follows that one link, as `find -H` does, and no link below it,
// and the sessions keep their paths under the store's directory as
// configured. The walkers do not follow links, their root's included,
// so such a store listed nothing and its sessions were never archived,
// without a word.
func walkLinked(loc *Location) (sessions []Session, problems []string, err error) {
	real, err := filepath.EvalSymlinks(loc.Dir)
	if err != nil {
		return nil, nil, err
	}
	l := *loc
	l.Dir = real
	sessions, problems, err = walkKind(&l)
	dir := filepath.Clean(loc.Dir)
	back := func(p string) string {
		if rel, rerr := filepath.Rel(real, p); rerr == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.Join(dir, rel)
		}
		return p
	}
	for i := range sessions {
		sessions[i].Loc = loc
		sessions[i].Path = back(sessions[i].Path)
		if sessions[i].Parent != "" {
			sessions[i].Parent = back(sessions[i].Parent)
		}
	}
	return sessions, problems, err
}
