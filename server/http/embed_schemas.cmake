# Embeds schemas/*.json into server_http as a generated .cpp of raw string literals, so nothing is read
# from disk at run time. Included from server/CMakeLists.txt after server_http is defined; the
# generation itself runs this file again in script mode (cmake -P) at build time.

if(CMAKE_SCRIPT_MODE_FILE)
    # Script mode: SCHEMA_DIR and OUTPUT are given with -D.
    file(GLOB files ${SCHEMA_DIR}/*.json)
    list(SORT files)
    set(delim "gg_schema")
    set(body "")
    set(count 0)
    foreach(f ${files})
        get_filename_component(name ${f} NAME)
        file(READ ${f} text)
        string(FIND "${text}" ")${delim}\"" clash)
        if(NOT clash EQUAL -1)
            message(FATAL_ERROR "${f} contains the raw-string delimiter )${delim}\"")
        endif()
        string(APPEND body "    {\"${name}\", R\"${delim}(${text})${delim}\"},\n")
        math(EXPR count "${count} + 1")
    endforeach()
    set(content "// Generated from schemas/*.json by server/http/embed_schemas.cmake. Do not edit.\n")
    string(APPEND content "#include \"server/http/embedded_schemas.h\"\n\n")
    string(APPEND content "namespace server::http::embedded {\n\n")
    string(APPEND content "static const EmbeddedFile kSchemas[] = {\n${body}};\n\n")
    string(APPEND content "std::span<const EmbeddedFile> schema_files() { return kSchemas; }\n\n")
    string(APPEND content "}  // namespace server::http::embedded\n")
    if(count EQUAL 0)
        message(FATAL_ERROR "no schemas found in ${SCHEMA_DIR}")
    endif()
    file(WRITE ${OUTPUT}.tmp "${content}")
    file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
    file(REMOVE ${OUTPUT}.tmp)
    return()
endif()

set(GGSERVE_SCHEMA_DIR ${PROJECT_SOURCE_DIR}/schemas)
file(GLOB GGSERVE_SCHEMA_FILES CONFIGURE_DEPENDS ${GGSERVE_SCHEMA_DIR}/*.json)
set(GGSERVE_SCHEMAS_CPP ${CMAKE_BINARY_DIR}/generated/server/http/embedded_schemas.cpp)
add_custom_command(
    OUTPUT ${GGSERVE_SCHEMAS_CPP}
    COMMAND ${CMAKE_COMMAND} -DSCHEMA_DIR=${GGSERVE_SCHEMA_DIR} -DOUTPUT=${GGSERVE_SCHEMAS_CPP}
            -P ${CMAKE_CURRENT_LIST_FILE}
    DEPENDS ${GGSERVE_SCHEMA_FILES} ${CMAKE_CURRENT_LIST_FILE}
    COMMENT "Embedding request schemas"
    VERBATIM)
target_sources(server_http PRIVATE ${GGSERVE_SCHEMAS_CPP})
