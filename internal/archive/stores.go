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
	"sort"
	"strconv"
	"strings"
	"time"
)

// Location is one native session store of an agent.
type Location struct {
	// Provider is the plugin's provider name (claude, codex, gemini, copilot).
	Provider string `json:"provider"`
	// Name says which store it is ("Claude Code projects").
	Name string `json:"name"`
	// Dir is the directory walked.
	Dir string `json:"dir"`
	// Match decides which files under Dir are sessions (a path relative
	// to Dir, slash-separated).
	Match func(rel string) bool `json:"-"`
	// Pattern describes Match for people (a glob).
	Pattern string `json:"pattern"`
	// From says where Dir came from: the default, an environment
	// variable, or the config file.
	From string `json:"from"`
	// RetentionDays is how long the agent keeps a session before
	// deleting it, when it does (0: it does not, as far as known).
	RetentionDays int `json:"retention_days,omitempty"`
}

// Env reads the environment (tests pass a map).
type Env func(string) string

// Config is the user's sync configuration file (JSON): stores beyond the
// bundled ones, for example an old home directory or a copied backup.
//
//	{"stores": [{"provider": "claude", "dir": "/mnt/old/.claude/projects", "pattern": "**/*.jsonl"}]}
type Config struct {
	Stores []ConfigStore `json:"stores"`
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

// ConfigPath is where the config file lives by default:
// $XDG_CONFIG_HOME/twasm/sync.json, else ~/.config/twasm/sync.json.
func ConfigPath(env Env) string {
	base := env("XDG_CONFIG_HOME")
	if base == "" {
		base = filepath.Join(env("HOME"), ".config")
	}
	return filepath.Join(base, "twasm", "sync.json")
}

// LoadConfig reads a config file; a missing file is an empty config unless
// required (given explicitly).
func LoadConfig(path string, required bool) (*Config, error) {
	b, err := os.ReadFile(path)
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
	return &c, nil
}

// Discover lists the native session stores of every bundled provider (the
// paths and overrides of ../shared/research/providers.md) plus the
// config's. Stores that do not exist are listed too: doctor says so.
func Discover(env Env, cfg *Config) []Location {
	home := env("HOME")
	var locs []Location
	dir := func(envName, def string) (string, string) {
		if v := env(envName); v != "" {
			return v, "$" + envName
		}
		return def, "default"
	}
	claude, from := dir("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	locs = append(locs, Location{Provider: "claude", Name: "Claude Code projects", Dir: filepath.Join(claude, "projects"),
		Pattern: "**/*.jsonl", Match: suffix(".jsonl"), From: from, RetentionDays: claudeRetention(claude)})
	codex, from := dir("CODEX_HOME", filepath.Join(home, ".codex"))
	locs = append(locs,
		Location{Provider: "codex", Name: "Codex sessions", Dir: filepath.Join(codex, "sessions"), Pattern: "**/rollout-*.jsonl", Match: rollout, From: from},
		Location{Provider: "codex", Name: "Codex archived sessions", Dir: filepath.Join(codex, "archived_sessions"), Pattern: "**/rollout-*.jsonl", Match: rollout, From: from})
	gemini, from := filepath.Join(home, ".gemini"), "default"
	if v := env("GEMINI_CLI_HOME"); v != "" {
		gemini, from = filepath.Join(v, ".gemini"), "$GEMINI_CLI_HOME"
	}
	locs = append(locs, Location{Provider: "gemini", Name: "Gemini CLI chats", Dir: filepath.Join(gemini, "tmp"),
		Pattern: "*/chats/session-*.json[l]", Match: geminiChat, From: from})
	copilot, from := dir("COPILOT_HOME", filepath.Join(home, ".copilot"))
	locs = append(locs, Location{Provider: "copilot", Name: "Copilot CLI session state", Dir: filepath.Join(copilot, "session-state"),
		Pattern: "*/events.jsonl", Match: copilotEvents, From: from})
	if x := env("XDG_STATE_HOME"); x != "" && env("COPILOT_HOME") == "" {
		locs = append(locs, Location{Provider: "copilot", Name: "Copilot CLI session state (before 1.0)", Dir: filepath.Join(x, ".copilot", "session-state"),
			Pattern: "*/events.jsonl", Match: copilotEvents, From: "$XDG_STATE_HOME"})
	}
	if cfg != nil {
		for _, s := range cfg.Stores {
			pat := cmp.Or(s.Pattern, "**/*.jsonl")
			re, _ := globRegexp(pat)
			locs = append(locs, Location{Provider: s.Provider, Name: cmp.Or(s.Name, s.Provider+" (config)"), Dir: expandHome(s.Dir, home),
				Pattern: pat, Match: re.MatchString, From: "config"})
		}
	}
	return locs
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

func suffix(s string) func(string) bool {
	return func(rel string) bool { return strings.HasSuffix(rel, s) }
}

func rollout(rel string) bool {
	b := filepath.Base(rel)
	return strings.HasPrefix(b, "rollout-") && strings.HasSuffix(b, ".jsonl")
}

func geminiChat(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) != 3 || parts[1] != "chats" || !strings.HasPrefix(parts[2], "session-") {
		return false
	}
	return strings.HasSuffix(parts[2], ".json") || strings.HasSuffix(parts[2], ".jsonl")
}

func copilotEvents(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) == 2 && parts[1] == "events.jsonl"
}

// claudeRetention reads cleanupPeriodDays from Claude Code's settings
// (default 30 days).
func claudeRetention(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		return 30
	}
	var s struct {
		CleanupPeriodDays *json.Number `json:"cleanupPeriodDays"`
	}
	if json.Unmarshal(b, &s) != nil || s.CleanupPeriodDays == nil {
		return 30
	}
	n, err := strconv.Atoi(s.CleanupPeriodDays.String())
	if err != nil || n < 0 {
		return 30
	}
	return n
}

// globRegexp turns a glob ("**/" any directories, "*" and "?" within one
// name, "[...]" a class) into a regexp over slash-separated paths.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
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
				return nil, fmt.Errorf("pattern %q: unclosed [", glob)
			}
			b.WriteString(glob[i : i+j+1])
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// Session is one session file found in a store.
type Session struct {
	Loc     *Location
	Path    string
	Size    int64
	ModTime time.Time
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
	err = filepath.WalkDir(loc.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != loc.Dir {
				problems = append(problems, err.Error())
				return nil
			}
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, rerr := filepath.Rel(loc.Dir, p)
		if rerr != nil || !loc.Match(filepath.ToSlash(rel)) {
			return nil
		}
		info, ierr := d.Info()
		if ierr != nil {
			problems = append(problems, ierr.Error()) // vanished meanwhile
			return nil
		}
		sessions = append(sessions, Session{Loc: loc, Path: p, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, problems, fmt.Errorf("%s: %w", loc.Dir, ErrStoreMissing)
		}
		return nil, problems, err
	}
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].Path < sessions[j].Path })
	return sessions, problems, nil
}
