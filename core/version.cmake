# Writes OUT with the code version (VERSION plus git describe of SRC), only if it changed.
execute_process(COMMAND git -C ${SRC} describe --always --dirty --abbrev=10
                OUTPUT_VARIABLE GIT_DESC OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE GIT_RC ERROR_QUIET)
if(NOT GIT_RC EQUAL 0 OR GIT_DESC STREQUAL "")
  set(GIT_DESC "no-git")
endif()
set(TEXT "#define QR_VERSION_STRING \"${VERSION} (${GIT_DESC})\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} OLD)
else()
  set(OLD "")
endif()
if(NOT OLD STREQUAL TEXT)
  file(WRITE ${OUT} "${TEXT}")
endif()
