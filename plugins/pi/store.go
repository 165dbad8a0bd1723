package pi

// StoreInfo says where an agent of the Pi family keeps its session files.
type StoreInfo struct {
	Agent string // the agent that writes it
	// Env names the environment variable that replaces the agent
	// directory ("" when none is known); the sessions are EnvSub under it.
	Env, EnvSub string
	Dir         string // the default directory of the sessions, ~ the home
	Pattern     string // the session files under it
}

// Store lists the native stores this plugin reads (package doc, Store).
//
// TODO(stores, issue #23 item 1): declare these in the plugin's manifest
// once abi.Manifest carries store declarations (an ABI minor version), so
// that sync and doctor find Pi's sessions without a sync.json entry.
var Store = []StoreInfo{
	{Agent: "pi", Env: "PI_CODING_AGENT_DIR", EnvSub: "sessions", Dir: "~/.pi/agent/sessions", Pattern: "*/*.jsonl"},
	{Agent: "omp", Dir: "~/.omp/agent/sessions", Pattern: "*/*.jsonl"},
	{Agent: "openclaw", Dir: "~/.openclaw/agents", Pattern: "*/sessions/*.jsonl"},
}
