// Package ls implements `twasm ls`: the runs in storage, newest first,
// with their status, start, duration, providers, steps, tools and cost,
// filtered by provider, status, time and name. A session is listed once:
// a run another stands for (views.Superseded: the original of a
// renormalize rebuild, a damaged archive sync made again, a run recorded
// from an agent's output whose session sync archived) is left out, as
// stats, usage, search and serve leave it out, unless --superseded.
package ls
