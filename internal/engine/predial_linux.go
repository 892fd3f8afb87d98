package engine

import "golang.org/x/sys/unix"

// adoptWarm makes the connections opened before the start (predial.go)
// idle connections of the event loop's free slots. Like any idle
// connection, one may have been closed by the server before its first
// request, so it counts as reused: a request that fails on it before any
// byte of the response is retried once on a new one.
func (l *epollLoop) adoptWarm() {
	for c := l.e.takeWarm(); c != nil; c = l.e.takeWarm() {
		fd, err := dupFD(c.Conn)
		l.t.close(c)
		if err != nil || len(l.free) == 0 {
			if err == nil {
				unix.Close(fd)
			}
			continue
		}
		i := l.free[len(l.free)-1]
		if l.register(i, fd) != nil {
			unix.Close(fd)
			continue
		}
		l.free = l.free[:len(l.free)-1]
		l.slots[i].reused = true
		l.idleSlot(i)
	}
}
