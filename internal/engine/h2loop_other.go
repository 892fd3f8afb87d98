//go:build !linux

package engine

import (
	"context"
	"sync"

	"github.com/openload/openload/schedule"
)

// HTTP/2 on the event loop is Linux's (h2loop_linux.go); elsewhere HTTP/2
// goes through x/net/http2's transport (h2.go).
type h2Loop struct{}

func newH2Loop(*generator, schedule.Schedule, *Stats, chan<- struct{}) *h2Loop { return nil }

func (*h2Loop) start(context.Context, *sync.WaitGroup) {}

// h2news is a connection of the loop, which there is not here.
type h2news struct{}

// h2LoopFields reports that no run goes on the HTTP/2 event loop here.
func h2LoopFields(*Config) bool { return false }

func (g *generator) predialH2(int) (Predial, bool) { return Predial{}, false }

func closeWarm(*generator) {}
