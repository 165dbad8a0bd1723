package host

// IdleInstances is how many idle instances p's pool holds, for the tests
// of package host_test that check a capture gives back what it takes.
func IdleInstances(p *Plugin) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}
