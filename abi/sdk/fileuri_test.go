package sdk

import "testing"

func TestFilePath(t *testing.T) {
	for _, tc := range []struct {
		uri, want string
		ok        bool
	}{
		{"file:///home/me/proj", "/home/me/proj", true},
		{"file:///home/me/my%20proj", "/home/me/my proj", true},
		{"file://localhost/srv/app", "/srv/app", true},
		{"file:///c%3A/Users/me/app", "c:/Users/me/app", true},
		{"file:///C:/Users/me/app", "C:/Users/me/app", true},
		{"file:///c%3A", "c:", true},
		{"file:///cd:/x", "/cd:/x", true},
		{"file://server/share/app", "", false},
		{"vscode-remote://ssh-remote%2Bbox/home/me/app", "", false},
		{"file:relative/path", "", false},
		{"/home/me/proj", "", false},
		{"", "", false},
		{"file://%zz", "", false},
	} {
		got, ok := FilePath(tc.uri)
		if got != tc.want || ok != tc.ok {
			t.Errorf("FilePath(%q) = %q, %v; want %q, %v", tc.uri, got, ok, tc.want, tc.ok)
		}
	}
}
