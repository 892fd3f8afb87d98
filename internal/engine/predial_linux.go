package engine

import "golang.org/x/sys/unix"

// adoptWarm makes the connections opened before the start (predial.go)
// idle connections of the event loop's free slots. Never used, they are as
// fresh as connections dialled at the request: a request that fails on one
// is not re-sent (wire.go). One the server closes while it waits is seen
// like any idle connection's close, and dropped.
func (l *epollLoop) adoptWarm() {
	for c := l.g.takeWarm(); c != nil; c = l.g.takeWarm() {
		if c.closedWhileIdle() { // the server closed it while the run waited to start
			l.t.close(c)
			continue
		}
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
		l.slots[i].reused = false
		l.idleSlot(i)
	}
}
