--[[
page.lua: what readers of a course page expect, for any woven lesson.

  Headings     each heading's text becomes a link to its own anchor (a
               permalink; the stylesheet marks it with "#").  The table of
               contents shows the text without the link.
  Code         an inline code span with - / . : or = in it keeps each word of
               up to 30 characters whole (<span class="nobr">), so a command
               like `nvcc -O3 -arch=sm_80` never wraps inside "-arch".
  Tables       every table sits in <div class="table-wrap">, which scrolls
               inside itself if it must, so the page never scrolls sideways
               (a div that holds only the table, such as a fact whose value
               is a table, becomes the wrapper: data-table-wrap).
               A table of 5 or more columns and at most 6 body rows also gets
               a transposed copy (class table-narrow; the original gets
               table-wide): one row per column of the original, one column
               per row.  The stylesheet shows the copy when the wide table
               would not fit, so a phone sees every column without
               scrolling.  The copy is aria-hidden; screen readers get the
               original.
  Plots        an SVG image NAME.svg whose folder also holds NAME-narrow.svg
               is drawn inline as a pair: the stylesheet shows the narrow
               drawing on narrow screens and the wide one elsewhere, each
               sized to the column.  Both carry role="img" and the image's
               alt text.  (make-plot writes such pairs.)  Any other lone
               SVG image (a hand-drawn diagram) stays an <img>, in a box
               that scrolls on a phone, where the stylesheet keeps the
               drawing large enough to read.
  Numbers      ::: {.plot-numbers plot="NAME"} ... ::: becomes a table of
               the values the plot tool wrote to NAME.values.tsv (first line:
               column labels, then one row per point), after the div's own
               content; the figure of NAME then names that table in its
               aria-describedby.  Put it in a ::: {.details summary="..."}
               fold for a plot's numbers one tap away.

The resource path (pandoc --resource-path) is where NAME.svg,
NAME-narrow.svg and NAME.values.tsv are looked up.
]]

local WIDE_MIN_COLUMNS = 5
local NARROW_MAX_ROWS = 6

-- ---------------------------------------------------------------------
-- Files on the resource path
-- ---------------------------------------------------------------------

local function find_file(name)
  -- Path of name, relative to the working directory or a resource folder.
  local dirs = { "." }
  for _, d in ipairs(PANDOC_STATE.resource_path or {}) do table.insert(dirs, d) end
  for _, d in ipairs(dirs) do
    local path = (d == "." or name:sub(1, 1) == "/") and name or (d .. "/" .. name)
    local f = io.open(path, "rb")
    if f then f:close(); return path end
  end
  return nil
end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

local function attr_escape(s)
  return (s:gsub("&", "&amp;"):gsub('"', "&quot;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

-- ---------------------------------------------------------------------
-- Headings
-- ---------------------------------------------------------------------

local function has_link(inlines)
  local found = false
  pandoc.walk_block(pandoc.Plain(inlines), { Link = function() found = true end })
  return found
end

function Header(h)
  if h.identifier == "" or has_link(h.content) then return nil end
  h.content = { pandoc.Link(h.content, "#" .. h.identifier, "",
                            pandoc.Attr("", { "self-link" })) }
  return h
end

-- ---------------------------------------------------------------------
-- Inline code: break between words, never inside a short one
-- ---------------------------------------------------------------------

local NOBR_MAX = 30   -- a longer word may still break, so a phone never scrolls

local function html_escape(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"))
end

local function Code(code)
  -- `nvcc -O3 -arch=sm_80` must not wrap as "nvcc -O3 -" / "arch=sm_80":
  -- each word up to NOBR_MAX characters is kept whole (class nobr).
  local text = code.text
  if not text:find("[-/.:=]") or #code.classes > 0 or code.identifier ~= "" then
    return nil
  end
  local out, pos = {}, 1
  for space, word in text:gmatch("(%s*)(%S+)") do
    table.insert(out, html_escape(space))
    if utf8.len(word) and utf8.len(word) <= NOBR_MAX then
      table.insert(out, '<span class="nobr">' .. html_escape(word) .. "</span>")
    else
      table.insert(out, html_escape(word))
    end
  end
  table.insert(out, html_escape(text:match("%s*$")))
  return pandoc.RawInline("html", "<code>" .. table.concat(out) .. "</code>")
end

-- ---------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------

local function cell(contents, align)
  return pandoc.Cell(contents, align or pandoc.AlignDefault, 1, 1, pandoc.Attr())
end

local function rows_of(tbl)
  -- The header row and the body rows, each a list of cell contents.
  local head = tbl.head.rows[1]
  if head == nil then return nil end
  local header = {}
  for _, c in ipairs(head.cells) do
    if c.col_span ~= 1 or c.row_span ~= 1 then return nil end
    table.insert(header, c.contents)
  end
  local body = {}
  for _, b in ipairs(tbl.bodies) do
    for _, r in ipairs(b.body) do
      local row = {}
      for _, c in ipairs(r.cells) do
        if c.col_span ~= 1 or c.row_span ~= 1 then return nil end
        table.insert(row, c.contents)
      end
      if #row ~= #header then return nil end
      table.insert(body, row)
    end
  end
  return header, body
end

local function transposed(tbl, header, body)
  -- One row per column of tbl, one column per row; the first column of tbl
  -- (its row labels, e.g. N) becomes the header row.
  local head_cells = { cell(header[1], pandoc.AlignLeft) }
  for _, row in ipairs(body) do
    table.insert(head_cells, cell(row[1], pandoc.AlignRight))
  end
  local rows = {}
  for j = 2, #header do
    local cells = { cell(header[j], pandoc.AlignLeft) }
    for _, row in ipairs(body) do
      table.insert(cells, cell(row[j], pandoc.AlignRight))
    end
    table.insert(rows, pandoc.Row(cells, pandoc.Attr()))
  end
  local colspecs = { { pandoc.AlignLeft, nil } }
  for _ = 1, #body do table.insert(colspecs, { pandoc.AlignRight, nil }) end
  local t = pandoc.Table(
    tbl.caption, colspecs,
    pandoc.TableHead({ pandoc.Row(head_cells, pandoc.Attr()) }, pandoc.Attr()),
    { { attr = pandoc.Attr(), row_head_columns = 1, head = {}, body = rows } },
    pandoc.TableFoot({}, pandoc.Attr()),
    pandoc.Attr("", { "table-narrow" }))
  return t
end

local WRAP_OPEN = '<div class="table-wrap">'

function Table(tbl)
  local out = { pandoc.RawBlock("html", WRAP_OPEN) }
  local header, body = rows_of(tbl)
  if header and #header >= WIDE_MIN_COLUMNS and #body >= 1
      and #body <= NARROW_MAX_ROWS then
    tbl.attr.classes:insert("table-wide")
    table.insert(out, tbl)
    table.insert(out, transposed(tbl, header, body))
  else
    table.insert(out, tbl)
  end
  table.insert(out, pandoc.RawBlock("html", "</div>"))
  return out
end

local function wrapper_only(div)
  -- A div holding nothing but one wrapped table (a fact whose value is a
  -- table): it becomes the wrapper itself, so the table stays its first
  -- child.  Filters run children first, so Table has already run.
  local c = div.content
  if #c < 3 or c[1].t ~= "RawBlock" or c[1].text ~= WRAP_OPEN
      or c[#c].t ~= "RawBlock" or c[#c].text ~= "</div>" then
    return nil
  end
  for k = 2, #c - 1 do
    if c[k].t ~= "Table" then return nil end
  end
  div.content = pandoc.List({ table.unpack(c, 2, #c - 1) })
  div.attributes["data-table-wrap"] = ""
  return div
end

-- ---------------------------------------------------------------------
-- Plots: inline SVG pairs
-- ---------------------------------------------------------------------

local numbers_id = {}     -- plot name -> id of its numbers table

local function svg_markup(path, classes, label)
  -- The <svg> element of a file, ready to sit inside HTML.
  local text = read_file(path)
  text = text:gsub("^%s*<%?xml.-%?>%s*", ""):gsub("<!%-%-.-%-%->", "")
  text = text:gsub("<!DOCTYPE.->%s*", "")
  local start = text:find("<svg[%s>]")
  if not start then error("page.lua: no <svg> element in " .. path, 0) end
  text = text:sub(start)
  local extra = ' class="' .. classes .. '" role="img" aria-label="'
                .. attr_escape(label) .. '"'
  text = text:gsub("^<svg", "<svg" .. extra, 1)
  return (text:gsub("%s+$", ""))
end

local function plot_pair(img)
  -- Paths of NAME.svg and NAME-narrow.svg for an image, or nil.
  local src = img.src
  if not src:match("%.svg$") or src:match("^%a[%w+.-]*:") then return nil end
  local wide = find_file(src)
  local narrow = find_file((src:gsub("%.svg$", "-narrow.svg")))
  if wide and narrow then return wide, narrow end
  return nil
end

local function plot_name(src)
  return (src:match("([^/]+)%.svg$"))
end

local function diagram_blocks(img)
  -- A lone SVG image without a narrow drawing: it keeps its own size on
  -- narrow screens and scrolls inside its own box, under a whole caption.
  if not img.src:match("%.svg$") or img.src:match("^%a[%w+.-]*:") then return nil end
  local alt = pandoc.utils.stringify(img.caption)
  local blocks = {
    pandoc.RawBlock("html", '<figure class="diagram"><div class="figure-scroll">'
      .. '<img src="' .. attr_escape(img.src) .. '" alt="' .. attr_escape(alt) .. '">'
      .. '</div>') }
  if #img.caption > 0 then
    table.insert(blocks, pandoc.RawBlock("html", '<figcaption aria-hidden="true">'))
    table.insert(blocks, pandoc.Plain(img.caption))
    table.insert(blocks, pandoc.RawBlock("html", "</figcaption>"))
  end
  table.insert(blocks, pandoc.RawBlock("html", "</figure>"))
  return blocks
end

local function figure_blocks(img)
  local wide, narrow = plot_pair(img)
  if not wide then return diagram_blocks(img) end
  local label = pandoc.utils.stringify(img.caption)
  local name = plot_name(img.src)
  local describedby = numbers_id[name]
  local open = '<figure class="plot" data-plot="' .. attr_escape(name) .. '"'
  if img.identifier ~= "" then open = open .. ' id="' .. attr_escape(img.identifier) .. '"' end
  if describedby then open = open .. ' aria-describedby="' .. describedby .. '"' end
  open = open .. '>'
  local art = '<div class="plot-art">\n'
              .. svg_markup(wide, "plot-wide", label) .. "\n"
              .. svg_markup(narrow, "plot-narrow", label) .. "\n</div>"
  local blocks = { pandoc.RawBlock("html", open), pandoc.RawBlock("html", art) }
  if #img.caption > 0 then
    table.insert(blocks, pandoc.RawBlock("html", '<figcaption aria-hidden="true">'))
    table.insert(blocks, pandoc.Plain(img.caption))
    table.insert(blocks, pandoc.RawBlock("html", "</figcaption>"))
  end
  table.insert(blocks, pandoc.RawBlock("html", "</figure>"))
  return blocks
end

local function lone_image(para)
  if #para.content == 1 and para.content[1].t == "Image" then
    return para.content[1]
  end
  return nil
end

-- ---------------------------------------------------------------------
-- A plot's numbers
-- ---------------------------------------------------------------------

local function split_tabs(line)
  local out = {}
  for field in (line .. "\t"):gmatch("(.-)\t") do
    table.insert(out, (field:gsub("^%s+", ""):gsub("%s+$", "")))
  end
  return out
end

local function numbers_table(name, id)
  local file = find_file(name .. ".values.tsv")
  if not file then
    io.stderr:write("page.lua: warning: no " .. name .. ".values.tsv on the "
                    .. "resource path; the plot's numbers are not shown\n")
    return nil
  end
  local lines = {}
  for line in read_file(file):gmatch("[^\n]+") do
    if not line:match("^#") then table.insert(lines, line) end
  end
  if #lines < 2 then return nil end
  local header = split_tabs(lines[1])
  local head = {}
  for _, h in ipairs(header) do table.insert(head, cell({ pandoc.Plain({ pandoc.Str(h) }) }, pandoc.AlignRight)) end
  local rows = {}
  for k = 2, #lines do
    local cells = {}
    for _, v in ipairs(split_tabs(lines[k])) do
      table.insert(cells, cell({ pandoc.Plain({ pandoc.Str(v) }) }, pandoc.AlignRight))
    end
    table.insert(rows, pandoc.Row(cells, pandoc.Attr()))
  end
  local colspecs = {}
  for _ = 1, #header do table.insert(colspecs, { pandoc.AlignRight, nil }) end
  return pandoc.Table(
    { long = {}, short = nil }, colspecs,
    pandoc.TableHead({ pandoc.Row(head, pandoc.Attr()) }, pandoc.Attr()),
    { { attr = pandoc.Attr(), row_head_columns = 1, head = {}, body = rows } },
    pandoc.TableFoot({}, pandoc.Attr()),
    pandoc.Attr(id, { "plot-numbers-table" }, { ["data-plot"] = name }))
end

local function plot_numbers(div)
  local name = div.attributes.plot
  if not name or name == "" then
    error("page.lua: a .plot-numbers div needs plot=\"NAME\"", 0)
  end
  local id = "numbers-" .. name:gsub("[^%w-]", "-")
  local t = numbers_table(name, id)
  if t then
    numbers_id[name] = id
    div.content:insert(t)
  end
  return div
end

-- Numbers first (so figures can point at them), then everything else.
return {
  { Div = function(div)
      if div.classes:includes("plot-numbers") then return plot_numbers(div) end
    end },
  { Header = Header,
    Code = Code,
    Table = Table,
    Div = wrapper_only,
    Para = function(para)
      local img = lone_image(para)
      if img then return figure_blocks(img) end
    end },
}
