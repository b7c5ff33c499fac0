--[[
pages.lua: one woven source, several pages (for any lesson).

The pages, in order, from the source's metadata (a YAML block in its prose):
  lit-pages:
    - {name: index, title: Lesson}
    - {name: lab, title: Lab notes}
  lit-index-page: lab      (optional)
Without lit-pages there is one page, index.  A name is [a-z0-9][a-z0-9-]*;
page NAME is the file NAME.html, except the first, which is the output that
weave.sh is given (lit-first-file).  The chunk list and the identifier index
(headings nw-chunks, nw-index) go to lit-index-page, by default the page named
program, else the last page.

The mark: a heading with the attribute page=NAME,
  # Lab notes: residency {#lab-residency page=lab}
sends its section (the heading and all up to the next heading of the same or
a higher level) to page NAME.  An unmarked heading stays on the page of its
enclosing section; what precedes every marked heading is on the first page.
Only top-level headings (not inside a div) are marks and section bounds.
A top-level div of class all-pages (::: {.banner .all-pages}) is on every
page, where it stands in the source's order.

weave.sh runs pandoc with this filter first, in two passes (a source without
lit-pages: the second only, from the Markdown):
  lit-pass=plan  (Markdown to JSON) checks the marks and that every link to
                 "#id" (Link elements and href="#id" in raw HTML) names an id
                 of some page; writes the pages' names, one a line, to the
                 file named by $LIT_PAGES_OUT.
  lit-page=NAME  (JSON to HTML) checks the links again; keeps page NAME's
                 blocks; a link to an id on
                 another page becomes "FILE#id"; under each heading of a page
                 other than the first whose section holds the target of links
                 from other pages (not identifier links, class nwident), a
                 line <div class="lit-backlinks">Linked from: <a>SECTION</a>,
                 ...</div>; metadata lit-nav (href, title, current: one per
                 page, for the template's navigation) and lit-page-title; and
                 the code of every chunk that a chunk on the page uses, at any
                 depth, but that has parts on other pages, as a JSON list of
                 the chunks' HTML in <script type="application/json"
                 id="lit-chunks"> (theme/page.js tangles from it).
Errors (exit through pandoc): "pages.lua: ..." naming the page, heading or
"#id" at fault.
]]

local NAME_RE = "^[a-z0-9][a-z0-9-]*$"
local ALL = {}   -- the page of an all-pages div: every page

local function str(x)
  if x == nil then return nil end
  return type(x) == "string" and x or pandoc.utils.stringify(x)
end

local function fail(msg) error("pages.lua: " .. msg, 0) end

local function page_list(meta)
  -- {pages = {{name, title, file}...}, byname, first, index}
  local spec, pages, byname = meta["lit-pages"], {}, {}
  if spec == nil then
    spec = { { name = "index", title = str(meta.title) or "index" } }
  end
  for _, p in ipairs(spec) do
    local name = str(type(p) == "table" and p.name ~= nil and p.name or p)
    local title = type(p) == "table" and p.title ~= nil and str(p.title)
                  or name
    if not name:match(NAME_RE) then
      fail("lit-pages: bad page name '" .. name .. "' (want " .. NAME_RE ..
           ")")
    end
    if byname[name] then fail("lit-pages: page '" .. name .. "' twice") end
    local page = { name = name, title = title, file = name .. ".html" }
    table.insert(pages, page)
    byname[name] = page
  end
  if #pages == 0 then fail("lit-pages: no page") end
  local first = str(meta["lit-first-file"])
  if first and first ~= "" then pages[1].file = first end
  local index = str(meta["lit-index-page"]) or
    (byname.program and "program") or pages[#pages].name
  if not byname[index] then
    fail("lit-index-page: '" .. index .. "' is not in lit-pages")
  end
  return { pages = pages, byname = byname, first = pages[1].name,
           index = index }
end

local HTML_ID = '%sid="([^"]*)"'

local function in_raw(text, fn)
  -- Calls fn(class, id) for each <a ... href="#id"> in raw HTML text.
  for tag in text:gmatch("<a%s[^>]*>") do
    local id = tag:match('%shref="#([^"]*)"')
    if id then fn(tag:match('%sclass="([^"]*)"') or "", id) end
  end
end

local function scan(block)
  -- ids = {id...}, links = {{id, class}...}, chunks = {{name, uses, text}}
  -- of one top-level block (the block itself included).
  local ids, links, chunks, nested_mark = {}, {}, {}, nil
  local function id_of(el)
    if el.identifier and el.identifier ~= "" then
      table.insert(ids, el.identifier)
    end
  end
  local function raw(r)
    if r.format ~= "html" then return end
    for id in r.text:gmatch(HTML_ID) do table.insert(ids, id) end
    in_raw(r.text, function(class, id)
      table.insert(links, { id = id, class = class })
    end)
    local name = r.text:match('^%s*<div class="nwchunk"[^>]*%sdata%-chunk="'
                              .. '([^"]*)"')
    if name then
      local uses = {}
      for u in r.text:gmatch('class="nwuse" data%-chunk="([^"]*)"') do
        table.insert(uses, u)
      end
      table.insert(chunks, { name = name, uses = uses, text = r.text })
    end
  end
  local filter = {
    Div = id_of, Span = id_of, Code = id_of, CodeBlock = id_of,
    Image = id_of, Table = id_of, Figure = id_of,
    Header = function(h)
      id_of(h)
      if h.attributes.page then nested_mark = h end
    end,
    Link = function(l)
      id_of(l)
      local id = l.target:match("^#(.+)$")
      if id then
        table.insert(links, { id = id, class = table.concat(l.classes, " ") })
      end
    end,
    RawBlock = raw, RawInline = raw,
  }
  pandoc.walk_block(pandoc.Div({ block }), filter)
  if block.t == "Header" then id_of(block) end
  if nested_mark and block.t ~= "Header" then
    fail("heading '" .. pandoc.utils.stringify(nested_mark.content) ..
         "': page=" .. nested_mark.attributes.page .. " on a heading " ..
         "inside a div; marks go on top-level headings")
  end
  return ids, links, chunks
end

local function plan(doc, P)
  -- Per top-level block i: page[i], section[i] (index of the innermost
  -- heading over it, nil before the first); where[id] = block index.
  local page, section, where, stack = {}, {}, {}, {}
  local info = {}
  for i, b in ipairs(doc.blocks) do
    if b.t == "Header" then
      while #stack > 0 and stack[#stack].level >= b.level do
        table.remove(stack)
      end
      local p = b.attributes.page
      if p == nil and (b.identifier == "nw-chunks" or
                       b.identifier == "nw-index") then
        p = P.index
      end
      if p and not P.byname[p] then
        fail("heading '" .. pandoc.utils.stringify(b.content) ..
             "': page=" .. p .. " is not in lit-pages")
      end
      p = p or (#stack > 0 and stack[#stack].page) or P.first
      table.insert(stack, { level = b.level, page = p, at = i })
    end
    page[i] = #stack > 0 and stack[#stack].page or P.first
    if b.t == "Div" and b.classes:includes("all-pages") then page[i] = ALL end
    section[i] = #stack > 0 and stack[#stack].at or nil
    local ids, links, chunks = scan(b)
    info[i] = { links = links, chunks = chunks }
    for _, id in ipairs(ids) do
      if where[id] == nil then where[id] = i end
    end
  end
  return { page = page, section = section, where = where, info = info }
end

local function check_links(doc, L)
  local bad, seen = {}, {}
  for i = 1, #doc.blocks do
    for _, l in ipairs(L.info[i].links) do
      if L.where[l.id] == nil and not seen[l.id] then
        seen[l.id] = true
        table.insert(bad, "'#" .. l.id .. "'")
      end
    end
  end
  if #bad > 0 then
    fail("link to an id that is on no page: " .. table.concat(bad, ", "))
  end
end

local function write_list(P)
  local path = os.getenv("LIT_PAGES_OUT")
  if not path or path == "" then return end
  local f = assert(io.open(path, "w"))
  for _, p in ipairs(P.pages) do f:write(p.name, "\n") end
  f:close()
end

-- ---- one page ---------------------------------------------------------------

local function plain_copy(inlines)
  -- A heading's inlines for a link's text: no links, notes or anchors.
  return pandoc.walk_block(pandoc.Plain(inlines), {
    Link = function(l) return l.content end,
    Note = function() return {} end,
    Span = function(s) s.identifier = ""; return s end,
  }).content
end

local function backlinks(doc, P, L, name)
  -- {heading index = Div} of the "Linked from" lines of page name.
  local from, order = {}, {}
  for i = 1, #doc.blocks do
    if L.page[i] ~= name and L.page[i] ~= ALL then
      for _, l in ipairs(L.info[i].links) do
        local t = L.where[l.id]
        local cls = " " .. l.class .. " "
        if t and L.page[t] == name and not cls:find(" nwident ", 1, true)
            and L.section[t] then
          local h = L.section[t]
          local key = L.page[i] .. "#" .. tostring(L.section[i] or 0)
          if not from[h] then
            from[h] = { seen = {} }
            table.insert(order, h)
          end
          if not from[h].seen[key] then
            from[h].seen[key] = true
            table.insert(from[h], { page = L.page[i], at = L.section[i] })
          end
        end
      end
    end
  end
  local out = {}
  for _, h in ipairs(order) do
    local content = pandoc.List({ pandoc.Str("Linked"), pandoc.Space(),
                                  pandoc.Str("from:"), pandoc.Space() })
    for k, src in ipairs(from[h]) do
      local file, head = P.byname[src.page].file, doc.blocks[src.at or 0]
      local text = head and plain_copy(head.content)
                   or { pandoc.Str(P.byname[src.page].title) }
      if head and head.identifier ~= "" then
        file = file .. "#" .. head.identifier
      end
      if k > 1 then content:extend({ pandoc.Str(","), pandoc.Space() }) end
      content:insert(pandoc.Link(text, file))
    end
    content:insert(pandoc.Str("."))
    out[h] = pandoc.Div({ pandoc.Plain(content) },
                        pandoc.Attr("", { "lit-backlinks" }))
  end
  return out
end

local JSON_ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n",
                   ["\t"] = "\\t", ["\r"] = "\\r", ["<"] = "\\u003c",
                   [">"] = "\\u003e", ["&"] = "\\u0026" }

local function json_string(s)
  return '"' .. s:gsub('[%c"\\<>&]', function(c)
    return JSON_ESC[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function chunk_data(doc, L, name)
  -- The <script> of chunks used from page name and not wholly on it.
  local parts, uses = {}, {}
  for i = 1, #doc.blocks do
    for _, c in ipairs(L.info[i].chunks) do
      parts[c.name] = parts[c.name] or {}
      table.insert(parts[c.name], { page = L.page[i], text = c.text })
      uses[c.name] = uses[c.name] or {}
      for _, u in ipairs(c.uses) do table.insert(uses[c.name], u) end
    end
  end
  local need, stack = {}, {}
  local function want(n)   -- n is needed, and what it uses (the stack)
    if not need[n] then need[n] = true; table.insert(stack, n) end
  end
  for n, ps in pairs(parts) do
    for _, p in ipairs(ps) do
      if p.page == name or p.page == ALL then want(n) end
    end
  end
  while #stack > 0 do
    for _, u in ipairs(uses[table.remove(stack)] or {}) do want(u) end
  end
  local names = {}
  for n in pairs(need) do
    for _, p in ipairs(parts[n] or {}) do
      if p.page ~= name and p.page ~= ALL then
        table.insert(names, n)
        break
      end
    end
  end
  if #names == 0 then return nil end
  table.sort(names)
  local items = {}
  for _, n in ipairs(names) do
    for _, p in ipairs(parts[n]) do
      table.insert(items, json_string(p.text))
    end
  end
  return pandoc.RawBlock("html", '<script type="application/json" ' ..
    'id="lit-chunks">[' .. table.concat(items, ",\n") .. "]</script>")
end

local function relink(block, P, L, name)
  local function target(id)
    local t = L.where[id]
    if t and L.page[t] ~= name and L.page[t] ~= ALL then
      return P.byname[L.page[t]].file .. "#" .. id
    end
  end
  local function raw(r)
    if r.format ~= "html" then return nil end
    r.text = r.text:gsub('(%shref=")#([^"]*)"', function(pre, id)
      local t = target(id)
      return t and pre .. t .. '"' or nil
    end)
    return r
  end
  return pandoc.walk_block(pandoc.Div({ block }), {
    Link = function(l)
      local id = l.target:match("^#(.+)$")
      local t = id and target(id)
      if t then l.target = t; return l end
    end,
    -- A figure's numbers="ID ..." (page.lua links its tables): FILE#ID for
    -- a table on another page.
    Image = function(img)
      local n = img.attributes.numbers
      if not n then return nil end
      img.attributes.numbers = n:gsub("[^%s]+", function(tok)
        return target((tok:gsub("^#", ""))) or tok
      end)
      return img
    end,
    RawBlock = raw, RawInline = raw,
  }).content
end

local function one_page(doc, P, L, name)
  local back = name ~= P.first and backlinks(doc, P, L, name) or {}
  local blocks = pandoc.List()
  for i, b in ipairs(doc.blocks) do
    if L.page[i] == name or L.page[i] == ALL then
      if b.t == "Header" then b.attributes.page = nil end
      if L.page[i] == ALL then
        b.classes = b.classes:filter(function(c) return c ~= "all-pages" end)
      end
      blocks:extend(relink(b, P, L, name))
      if back[i] then blocks:insert(back[i]) end
    end
  end
  local data = chunk_data(doc, L, name)
  if data then blocks:insert(data) end
  if #P.pages > 1 then
    local nav = {}
    for _, p in ipairs(P.pages) do
      table.insert(nav, { href = p.file, title = p.title,
                          current = p.name == name })
    end
    doc.meta["lit-nav"] = nav
    if name ~= P.first then
      doc.meta["lit-page-title"] = P.byname[name].title
    end
  end
  doc.blocks = blocks
  return doc
end

function Pandoc(doc)
  local P = page_list(doc.meta)
  local L = plan(doc, P)
  check_links(doc, L)
  if str(doc.meta["lit-pass"]) == "plan" then
    write_list(P)
    doc.meta["lit-pass"] = nil   -- the JSON is read again by the pages
    return doc
  end
  local name = str(doc.meta["lit-page"]) or P.first
  if not P.byname[name] then fail("no page '" .. name .. "' in lit-pages") end
  return one_page(doc, P, L, name)
end
