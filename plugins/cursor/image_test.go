//go:build !wasip1

package cursor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twasm/twasm/abi/sdk/sdktest"
	"github.com/twasm/twasm/plugins/cursor"
	"github.com/twasm/twasm/transcript"
)

// TestIDEBubbleImages: a user's bubble that holds only the images the
// user pasted (text "", context.selectedImages) is a turn of the user's,
// its images named; before, it was dropped as an empty bubble, and two
// answers of the model read as one after the other. Modelled on a real
// globalStorage state.vscdb of September 2025 (composer _v 9, bubbles _v
// 3 without createdAt; three such turns in one composer), written for
// the test.
func TestIDEBubbleImages(t *testing.T) {
	rows := []string{
		`{"$twasm":"source","store":"Cursor IDE","path":"state.vscdb","name":"state.vscdb","size":20480,"mtime":"2025-09-13T03:18:09.000Z","session":"c1","since":0,"cursor":1757733489736000,"user_version":0,"schema_version":2}`,
		`{"$twasm":"row","table":"composer","key":"c1","version":1757733489736,"row":{"id":"c1","version":1757733489736,"created_ms":1757731209295,"value":{"_v":9,"composerId":"c1","name":"Issues with loading past chats","createdAt":1757731209295,"lastUpdatedAt":1757733489736,"unifiedMode":"agent","fullConversationHeadersOnly":[{"bubbleId":"b1","type":1},{"bubbleId":"b2","type":2},{"bubbleId":"b3","type":1},{"bubbleId":"b4","type":2}]}}}`,
		`{"$twasm":"row","table":"bubble","key":"b1","version":1,"row":{"id":"b1","pos":0,"version":1,"time_ms":null,"value":{"_v":3,"bubbleId":"b1","type":1,"text":"Which folder is it?","tokenCount":{"inputTokens":0,"outputTokens":0}}}}`,
		`{"$twasm":"row","table":"bubble","key":"b2","version":1,"row":{"id":"b2","pos":1,"version":1,"time_ms":null,"value":{"_v":3,"bubbleId":"b2","type":2,"text":"Look under User.","tokenCount":{"inputTokens":9711,"outputTokens":284}}}}`,
		`{"$twasm":"row","table":"bubble","key":"b3","version":1,"row":{"id":"b3","pos":2,"version":1,"time_ms":null,"value":{"_v":3,"bubbleId":"b3","type":1,"text":"","richText":"{\"root\":{\"children\":[]}}","context":{"selectedImages":[{"uuid":"u1","path":"/Users/me/Library/Application Support/Cursor/User/workspaceStorage/images/Screenshot 1.png","dimension":{"width":1840,"height":1004},"addedWithoutMention":true}]},"tokenCount":{"inputTokens":0,"outputTokens":0}}}}`,
		`{"$twasm":"row","table":"bubble","key":"b4","version":1,"row":{"id":"b4","pos":3,"version":1,"time_ms":null,"value":{"_v":3,"bubbleId":"b4","type":2,"text":"Now I can see the folders.","tokenCount":{"inputTokens":10623,"outputTokens":954}}}}`,
	}
	r, err := sdktest.Run(context.Background(), cursor.Plugin, "cursor", []byte(strings.Join(rows, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r.SilentN != 0 {
		t.Errorf("%d silent line(s)", r.SilentN)
	}
	var turns []string
	for _, e := range r.Events {
		m := e.Event.Message()
		if m == nil {
			continue
		}
		who := "assistant"
		if e.Event.Type == transcript.MessageUser {
			who = "user"
		}
		var texts []string
		for _, b := range m.Blocks {
			texts = append(texts, b.Text)
		}
		turns = append(turns, who+": "+strings.Join(texts, " "))
	}
	want := []string{
		"user: Which folder is it?",
		"assistant: Look under User.",
		"user: [image /Users/me/Library/Application Support/Cursor/User/workspaceStorage/images/Screenshot 1.png]",
		"assistant: Now I can see the folders.",
	}
	if strings.Join(turns, "\n") != strings.Join(want, "\n") {
		t.Errorf("turns\n%s\nwant\n%s", strings.Join(turns, "\n"), strings.Join(want, "\n"))
	}
}
