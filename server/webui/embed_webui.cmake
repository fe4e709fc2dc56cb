# The chat UI (web/) inside the binary: at build time `node web/build.mjs` bundles it into
# build/web-dist (each file also gzip-compressed) and this file, run again in script mode (cmake -P),
# turns the .gz files into a generated .cpp of byte arrays. Nothing is read from disk at run time.
# -DGGSERVE_WEBUI=OFF builds without node: the server then has no embedded UI (--path DIR still works).

if(CMAKE_SCRIPT_MODE_FILE)
    # Script mode: DIST (the bundle directory, or empty for none) and OUTPUT are given with -D.
    set(body "")
    set(count 0)
    if(DIST)
        file(GLOB_RECURSE files RELATIVE ${DIST} ${DIST}/*)
        list(SORT files)
        foreach(rel ${files})
            if(rel MATCHES "\\.gz$" OR rel STREQUAL "manifest.json")
                continue()
            endif()
            if(NOT EXISTS ${DIST}/${rel}.gz)
                message(FATAL_ERROR "${DIST}/${rel} has no .gz beside it")
            endif()
            file(READ ${DIST}/${rel}.gz hex HEX)
            string(LENGTH "${hex}" n)
            math(EXPR n "${n} / 2")
            string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
            string(MAKE_C_IDENTIFIER "${rel}" id)
            string(APPEND arrays "static const unsigned char k_${id}[${n}] = {${bytes}};\n")
            string(APPEND body "    {\"/${rel}\", {k_${id}, ${n}}},\n")
            math(EXPR count "${count} + 1")
        endforeach()
        if(count EQUAL 0)
            message(FATAL_ERROR "the web UI bundle in ${DIST} is empty")
        endif()
    endif()
    set(content "// Generated from web/ by server/webui/embed_webui.cmake. Do not edit.\n")
    string(APPEND content "#include \"server/webui/embedded_assets.h\"\n\n")
    string(APPEND content "namespace webui {\n\n")
    if(count EQUAL 0)
        string(APPEND content "std::span<const EmbeddedAsset> embedded_assets() { return {}; }\n\n")
    else()
        string(APPEND content "${arrays}\nstatic const EmbeddedAsset kAssets[] = {\n${body}};\n\n")
        string(APPEND content "std::span<const EmbeddedAsset> embedded_assets() { return kAssets; }\n\n")
    endif()
    string(APPEND content "}  // namespace webui\n")
    file(WRITE ${OUTPUT}.tmp "${content}")
    file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
    file(REMOVE ${OUTPUT}.tmp)
    return()
endif()

option(GGSERVE_WEBUI "Embed the chat UI (web/, needs node and npm ci in web/)" ON)
set(GGSERVE_WEBUI_CPP ${CMAKE_BINARY_DIR}/generated/server/webui/embedded_assets.cpp)
if(GGSERVE_WEBUI)
    set(web ${PROJECT_SOURCE_DIR}/web)
    find_program(NODE_EXECUTABLE node)
    if(NOT NODE_EXECUTABLE)
        message(FATAL_ERROR "The chat UI is built with Node.js, which is not installed: run scripts/setup.sh "
                            "(or apt-get install nodejs npm), or configure with -DGGSERVE_WEBUI=OFF for a "
                            "server without the embedded UI.")
    endif()
    if(NOT EXISTS ${web}/node_modules/esbuild/package.json)
        message(FATAL_ERROR "The chat UI's npm packages are not installed: run scripts/setup.sh (or "
                            "`npm ci` in web/), or configure with -DGGSERVE_WEBUI=OFF.")
    endif()
    file(GLOB_RECURSE web_sources CONFIGURE_DEPENDS ${web}/src/*)
    set(dist ${CMAKE_BINARY_DIR}/web-dist)
    add_custom_command(
        OUTPUT ${GGSERVE_WEBUI_CPP}
        COMMAND ${NODE_EXECUTABLE} ${web}/build.mjs ${dist}
        COMMAND ${CMAKE_COMMAND} -DDIST=${dist} -DOUTPUT=${GGSERVE_WEBUI_CPP} -P ${CMAKE_CURRENT_LIST_FILE}
        DEPENDS ${web_sources} ${web}/build.mjs ${web}/index.html ${web}/favicon.svg ${web}/package-lock.json
                ${CMAKE_CURRENT_LIST_FILE}
        WORKING_DIRECTORY ${web}
        COMMENT "Building and embedding the chat UI (web/)"
        VERBATIM)
else()
    add_custom_command(
        OUTPUT ${GGSERVE_WEBUI_CPP}
        COMMAND ${CMAKE_COMMAND} -DDIST= -DOUTPUT=${GGSERVE_WEBUI_CPP} -P ${CMAKE_CURRENT_LIST_FILE}
        DEPENDS ${CMAKE_CURRENT_LIST_FILE}
        COMMENT "Chat UI not embedded (GGSERVE_WEBUI=OFF)"
        VERBATIM)
endif()
target_sources(server_webui PRIVATE ${GGSERVE_WEBUI_CPP})
