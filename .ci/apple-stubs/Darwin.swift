// The C library under Darwin's name: the POSIX calls FileSessionStore makes (open, read, write,
// fsync, rename, close) have the same Swift shape in Darwin and Glibc.
// https://developer.apple.com/documentation/kernel (the BSD layer's POSIX functions)
@_exported import Glibc
