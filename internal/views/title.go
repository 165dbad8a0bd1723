package views

import (
	"strings"

	"github.com/twasm/twasm/transcript"
)

// TitleRunes bounds a run's title: enough to recognize a prompt, short
// enough for a listing.
const TitleRunes = 100

// promptTitle is the title a user message gives a run: its prompt text
// (text blocks of origin prompt, or none; injected context, system prompts and tool
// results are not what a person typed), on one line, cut to TitleRunes.
func promptTitle(ev *transcript.Event) string {
	m := ev.Message()
	if m == nil {
		return ""
	}
	var parts []string
	for _, b := range m.Blocks {
		if b.Type == transcript.BlockText && (b.Origin == "" || b.Origin == transcript.OriginPrompt) {
			if t := oneLine(b.Text); t != "" {
				parts = append(parts, t)
			}
		}
	}
	return Clip(strings.Join(parts, " "), TitleRunes)
}

// IsAutoName reports whether a run's name is one twasm made up, not one a
// person gave: every archived session's ("<provider> session <id>"), none
// at all, or record's default (IsRecordDefaultName).
func IsAutoName(name string, archived bool) bool {
	return archived || name == "" || IsRecordDefaultName(name)
}

// IsRecordDefaultName reports whether name is the one `twasm record`
// gives a run it was not told a name for: "record <provider>".
func IsRecordDefaultName(name string) bool {
	p, ok := strings.CutPrefix(name, "record ")
	return ok && p != "" && !strings.ContainsAny(p, " \t")
}

// DisplayName is what a run is called where it is listed or shown: the
// name a person gave it; else its first prompt (Title); else the
// made-up name; else the start of its id.
func DisplayName(h RunHead) string {
	if !h.AutoName && h.Name != "" {
		return h.Name
	}
	if h.Title != "" {
		return h.Title
	}
	if h.Name != "" {
		return h.Name
	}
	return ShortID(h.RunID)
}
