package sdk

import (
	"net/url"
	"strings"
)

// FilePath is the local path a file URI names (file:///home/me/proj, its
// escapes decoded; file:///c%3A/src/app is c:/src/app); false for
// anything else: another scheme (a remote workspace's), another host, a
// path that is not absolute. Agents that keep a workspace's folder as a
// URI (Amp's trees, Cursor's workspace.json) state their working
// directory with it.
func FilePath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Host != "" && u.Host != "localhost" || !strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	p := u.Path
	if len(p) >= 3 && p[2] == ':' && (p[1] >= 'a' && p[1] <= 'z' || p[1] >= 'A' && p[1] <= 'Z') && (len(p) == 3 || p[3] == '/') {
		p = p[1:] // a drive letter
	}
	return p, true
}
