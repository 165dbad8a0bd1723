package abi

// Manifest describes a plugin. It is JSON on the wire.
type Manifest struct {
	// Name is the plugin's name, e.g. "claude".
	Name string `json:"name"`
	// Version is the plugin's own version (semver).
	Version string `json:"version"`
	// Providers are the provider names it serves, e.g. ["claude",
	// "anthropic"]; a provider name belongs to one plugin.
	Providers []string `json:"providers"`
	// Formats are the input formats it reads, e.g. ["stream-json",
	// "json", "session-log"].
	Formats []string `json:"formats"`
	// Description is one line for `twasm plugins list`.
	Description string `json:"description,omitempty"`
	// SDK names the SDK and version that built the plugin.
	SDK string `json:"sdk,omitempty"`
	// Keys (ABI 1.2, optional) are the object keys the plugin reads, at
	// most 255 distinct names. The host then marks every unescaped
	// key of its tapes as keyed: a declared key carries its 1-based
	// number in this list instead of a hash, so that the plugin matches it
	// without hashing or comparing bytes (see Doc.Keys). A host that
	// predates 1.2 ignores the field and sends hashed keys.
	Keys []string `json:"keys,omitempty"`
}

// BeginOptions are the per-stream options, JSON on the wire.
type BeginOptions struct {
	// Provider is the provider name the stream was recorded for.
	Provider string `json:"provider"`
	// Format is a format hint ("" = detect).
	Format string `json:"format,omitempty"`
}
