# embed.cmake - write runtime/strings.inc as a C array (cmake -P, at build
# time): the one text of the string routines that burncc compiles in and
# that codegen/c/emit_c.c copies into the modules with string kernels.
#   cmake -DIN=runtime/strings.inc -DOUT=gen/strings_src.c -P embed.cmake
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" body "${body}")
file(WRITE ${OUT}.tmp "/* generated from runtime/strings.inc by runtime/embed.cmake */\n#include \"runtime/strings_src.h\"\nconst char burn_strings_src[] = {\n${body}0};\n")
file(RENAME ${OUT}.tmp ${OUT})
