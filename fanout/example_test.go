package fanout_test

import (
	"fmt"

	"github.com/twasm/twasm/fanout"
)

// A publisher feeds events to any number of subscribers; each reads its
// own channel, and a slow one loses values instead of slowing the others.
func Example() {
	f := fanout.New[string](fanout.Options{BufferSize: 8})
	page := f.Subscribe(fanout.SubscribeOptions{Name: "web page"})
	audit := f.Subscribe(fanout.SubscribeOptions{Name: "audit log", BufferSize: 1})

	for _, ev := range []string{"run.started", "message.user", "run.completed"} {
		f.Publish(ev)
	}
	f.Close() // the channels close once what they buffered is read

	for ev := range page.C() {
		fmt.Println("page:", ev)
	}
	for ev := range audit.C() {
		fmt.Println("audit:", ev)
	}
	fmt.Println("audit dropped:", audit.Dropped())
	// Output:
	// page: run.started
	// page: message.user
	// page: run.completed
	// audit: run.started
	// audit dropped: 2
}
