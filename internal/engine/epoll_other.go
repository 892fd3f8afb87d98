//go:build !linux

package engine

import (
	"context"

	"github.com/openload/openload/schedule"
)

// The epoll client is Linux's (epoll_linux.go); elsewhere the lean client
// runs with a goroutine per connection.
type epollLoop struct{}

func newEpollLoop(*run) *epollLoop { return nil }

func (*epollLoop) run(context.Context, schedule.Schedule, *Stats, chan<- struct{}) {}

// epollClient is the client Config.Epoll gives where it applies: the lean
// client, here.
const epollClient = ClientLean
