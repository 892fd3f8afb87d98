//go:build !linux

package engine

import (
	"context"
	"sync"

	"github.com/openload/openload/schedule"
)

// The epoll client is Linux's (epoll_linux.go); elsewhere the lean client
// runs with a goroutine per connection.
type epollLoop struct{}

func newEpollLoop(*generator, schedule.Schedule, *Stats, chan<- struct{}) *epollLoop { return nil }

func (*epollLoop) start(context.Context, *sync.WaitGroup) {}

// epollClient is the client Config.Epoll gives where it applies: the lean
// client, here.
const epollClient = ClientLean

// loopSlice is the scheduler slice the loop's thread asks for: none here,
// where there is no loop.
const loopSlice = 0

// holdEarly holds the kernel's stamping for a loop; there is no loop here.
func (*generator) holdEarly() {}
