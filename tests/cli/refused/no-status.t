# A transcript the runner must refuse: the step below has only a "must not contain" line, which
# passes whatever ddx does (tests/CMakeLists.txt: cli/runner-refuses-step-without-status).
$ --version
< this text is never printed
