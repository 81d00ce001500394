# embed.cmake -- turns the web assets (web/*.css, web/*.js) into a C file at build time, the way
# tools/gen.c embeds the knowledge base: every page ddx writes inlines them, so nothing is ever
# fetched. For each script it also writes the base64 SHA-256 that pages put in their
# Content-Security-Policy (script-src 'sha256-...'), so only that exact script may run.
#   cmake -DOUT=web_assets.c -DASSETS="web/ddx.css;web/catalogue.js" -P web/embed.cmake
# Each asset web/NAME.EXT becomes `const char dx_web_NAME_EXT[]` (NUL-terminated) and
# `const size_t dx_web_NAME_EXT_len`; a .js also gets `const char dx_web_NAME_js_sha256[]`.

set(b64 "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

# The base64 of the bytes written as hex digits in HEX.
function(hex_base64 hex out)
  string(LENGTH "${hex}" n)
  set(res "")
  set(i 0)
  while(i LESS n)
    set(v 0)
    set(k 0)
    while(k LESS 3)
      math(EXPR pos "${i} + ${k} * 2")
      if(pos LESS n)
        string(SUBSTRING "${hex}" ${pos} 2 byte)
        math(EXPR v "(${v} << 8) + 0x${byte}")
      else()
        math(EXPR v "${v} << 8")
      endif()
      math(EXPR k "${k} + 1")
    endwhile()
    math(EXPR left "(${n} - ${i}) / 2")
    foreach(shift 18 12 6 0)
      math(EXPR idx "(${v} >> ${shift}) & 63")
      string(SUBSTRING "${b64}" ${idx} 1 c)
      # one byte left: two characters then "=="; two bytes: three characters then "="
      if((left EQUAL 1 AND shift LESS 12) OR (left EQUAL 2 AND shift EQUAL 0))
        set(c "=")
      endif()
      string(APPEND res "${c}")
    endforeach()
    math(EXPR i "${i} + 6")
  endwhile()
  set(${out} "${res}" PARENT_SCOPE)
endfunction()

set(text "/* Generated from web/ by web/embed.cmake; do not edit. */\n#include <stddef.h>\n\n")
foreach(asset ${ASSETS})
  get_filename_component(name "${asset}" NAME)
  string(REGEX REPLACE "[^A-Za-z0-9]" "_" sym "dx_web_${name}")
  file(READ "${asset}" hex HEX)
  string(LENGTH "${hex}" nhex)
  math(EXPR nbytes "${nhex} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){24})" "\\1\n" bytes "${bytes}")
  string(APPEND text "extern const char ${sym}[];\nconst char ${sym}[] = {\n${bytes}0x00};\n")
  string(APPEND text "extern const size_t ${sym}_len;\nconst size_t ${sym}_len = ${nbytes};\n")
  if(name MATCHES "\\.js$")
    file(SHA256 "${asset}" digest)
    hex_base64("${digest}" digest64)
    string(APPEND text "extern const char ${sym}_sha256[];\n")
    string(APPEND text "const char ${sym}_sha256[] = \"${digest64}\";\n")
  endif()
  string(APPEND text "\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
