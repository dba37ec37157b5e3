/* xdnd_drop: a minimal XDND drag source for the end-to-end test. xdotool can move the mouse and
 * type but cannot drag files, so this program plays the part of a file manager: it offers one
 * path as text/uri-list to a target window and performs the drop.
 *
 *   xdnd_drop WINDOW_ID PATH [X Y]     (X Y: root coordinates of the drop; default: window centre)
 *
 * Protocol (freedesktop XDND v5, source side): own XdndSelection, send XdndEnter and
 * XdndPosition, wait for XdndStatus (accepted), send XdndDrop, answer the target's
 * SelectionRequest with the URI list, wait for XdndFinished. Exit status 0 when the target
 * accepted and finished the drop, 1 otherwise (with a message), 2 on usage errors. */
#include <X11/Xatom.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static Atom XdndAware, XdndSelection, XdndEnter, XdndPosition, XdndStatus, XdndDrop, XdndFinished,
    XdndActionCopy, XdndLeave, UriList, Targets;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void send_client_message(Display* dpy, Window target, Atom type, long l0, long l1, long l2, long l3,
                                long l4) {
  XEvent ev;
  memset(&ev, 0, sizeof ev);
  ev.xclient.type = ClientMessage;
  ev.xclient.display = dpy;
  ev.xclient.window = target;
  ev.xclient.message_type = type;
  ev.xclient.format = 32;
  ev.xclient.data.l[0] = l0;
  ev.xclient.data.l[1] = l1;
  ev.xclient.data.l[2] = l2;
  ev.xclient.data.l[3] = l3;
  ev.xclient.data.l[4] = l4;
  XSendEvent(dpy, target, False, NoEventMask, &ev);
  XFlush(dpy);
}

/* file:///percent%20encoded/path\r\n */
static char* make_uri_list(const char* path) {
  size_t n = strlen(path);
  char* uri = malloc(8 + n * 3 + 3);
  char* o = uri;
  o += sprintf(o, "file://");
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)path[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("/-_.~", c))
      *o++ = (char)c;
    else
      o += sprintf(o, "%%%02X", c);
  }
  strcpy(o, "\r\n");
  return uri;
}

/* How long the target may take to answer: generous, for a loaded machine's slow frames. */
static const double kReplySeconds = 30.0;

/* Waits up to `seconds` for an event satisfying `want`; handles selection requests meanwhile. */
static int wait_for(Display* dpy, Window source, const char* uri_list, double seconds, Atom want_client,
                    XEvent* out) {
  const double deadline = now_seconds() + seconds;
  while (now_seconds() < deadline) {
    while (XPending(dpy)) {
      XEvent ev;
      XNextEvent(dpy, &ev);
      if (getenv("XDND_DEBUG")) fprintf(stderr, "xdnd_drop: event %d\n", ev.type);
      if (ev.type == SelectionRequest) {
        XSelectionRequestEvent* req = &ev.xselectionrequest;
        if (getenv("XDND_DEBUG")) {
          char* name = XGetAtomName(dpy, req->target);
          fprintf(stderr, "xdnd_drop: selection request for %s\n", name);
          XFree(name);
        }
        XEvent reply;
        memset(&reply, 0, sizeof reply);
        reply.xselection.type = SelectionNotify;
        reply.xselection.display = dpy;
        reply.xselection.requestor = req->requestor;
        reply.xselection.selection = req->selection;
        reply.xselection.target = req->target;
        reply.xselection.time = req->time;
        reply.xselection.property = req->property ? req->property : req->target;
        if (req->target == Targets) {
          Atom offered[2] = {Targets, UriList};
          XChangeProperty(dpy, req->requestor, reply.xselection.property, XA_ATOM, 32, PropModeReplace,
                          (unsigned char*)offered, 2);
        } else if (req->target == UriList || req->target == XA_STRING) {
          XChangeProperty(dpy, req->requestor, reply.xselection.property, req->target, 8, PropModeReplace,
                          (const unsigned char*)uri_list, (int)strlen(uri_list));
        } else {
          reply.xselection.property = None;
        }
        XSendEvent(dpy, req->requestor, False, NoEventMask, &reply);
        XFlush(dpy);
        continue;
      }
      if (ev.type == ClientMessage && ev.xclient.window == source && ev.xclient.message_type == want_client) {
        *out = ev;
        return 1;
      }
    }
    struct pollfd pfd = {ConnectionNumber(dpy), POLLIN, 0};
    poll(&pfd, 1, 50);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    fprintf(stderr, "usage: xdnd_drop WINDOW_ID PATH [X Y]\n");
    return 2;
  }
  Display* dpy = XOpenDisplay(NULL);
  if (!dpy) {
    fprintf(stderr, "xdnd_drop: cannot open display\n");
    return 1;
  }
  const Window target = (Window)strtoul(argv[1], NULL, 0);
  char* uri_list = make_uri_list(argv[2]);

  XdndAware = XInternAtom(dpy, "XdndAware", False);
  XdndSelection = XInternAtom(dpy, "XdndSelection", False);
  XdndEnter = XInternAtom(dpy, "XdndEnter", False);
  XdndPosition = XInternAtom(dpy, "XdndPosition", False);
  XdndStatus = XInternAtom(dpy, "XdndStatus", False);
  XdndDrop = XInternAtom(dpy, "XdndDrop", False);
  XdndFinished = XInternAtom(dpy, "XdndFinished", False);
  XdndLeave = XInternAtom(dpy, "XdndLeave", False);
  XdndActionCopy = XInternAtom(dpy, "XdndActionCopy", False);
  UriList = XInternAtom(dpy, "text/uri-list", False);
  Targets = XInternAtom(dpy, "TARGETS", False);

  /* The target must advertise XDND. */
  Atom actual_type;
  int actual_format;
  unsigned long count, after;
  unsigned char* data = NULL;
  if (XGetWindowProperty(dpy, target, XdndAware, 0, 1, False, AnyPropertyType, &actual_type, &actual_format,
                         &count, &after, &data) != Success || count == 0) {
    fprintf(stderr, "xdnd_drop: window 0x%lx is not XdndAware\n", (unsigned long)target);
    return 1;
  }
  const long version = data ? ((long*)data)[0] : 5;
  XFree(data);

  int x = 0, y = 0;
  if (argc == 5) {
    x = atoi(argv[3]);
    y = atoi(argv[4]);
  } else {
    XWindowAttributes attributes;
    Window child;
    XGetWindowAttributes(dpy, target, &attributes);
    XTranslateCoordinates(dpy, target, DefaultRootWindow(dpy), attributes.width / 2, attributes.height / 2, &x, &y,
                          &child);
  }

  const Window source = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), 0, 0, 1, 1, 0, 0, 0);
  XSetSelectionOwner(dpy, XdndSelection, source, CurrentTime);
  const long use_version = version < 5 ? version : 5;

  send_client_message(dpy, target, XdndEnter, (long)source, use_version << 24, (long)UriList, 0, 0);
  send_client_message(dpy, target, XdndPosition, (long)source, 0, ((long)x << 16) | (y & 0xffff), CurrentTime,
                      (long)XdndActionCopy);
  XEvent status;
  if (!wait_for(dpy, source, uri_list, kReplySeconds, XdndStatus, &status)) {
    fprintf(stderr, "xdnd_drop: no XdndStatus from the target\n");
    return 1;
  }
  if (!(status.xclient.data.l[1] & 1)) {
    send_client_message(dpy, target, XdndLeave, (long)source, 0, 0, 0, 0);
    fprintf(stderr, "xdnd_drop: the target refused the drop\n");
    return 1;
  }
  send_client_message(dpy, target, XdndDrop, (long)source, 0, CurrentTime, 0, 0);
  XEvent finished;
  if (!wait_for(dpy, source, uri_list, kReplySeconds, XdndFinished, &finished)) {
    fprintf(stderr, "xdnd_drop: no XdndFinished from the target\n");
    return 1;
  }
  /* XDND v5 says bit 0 of l[1] is "accepted"; GLFW 3.3 puts the byte count of the data it read
   * there instead, so any non-zero value means the drop arrived. */
  if (use_version >= 5 && finished.xclient.data.l[1] == 0) {
    fprintf(stderr, "xdnd_drop: the target reported the drop as failed\n");
    return 1;
  }
  printf("dropped %s onto 0x%lx\n", argv[2], (unsigned long)target);
  free(uri_list);
  XDestroyWindow(dpy, source);
  XCloseDisplay(dpy);
  return 0;
}
