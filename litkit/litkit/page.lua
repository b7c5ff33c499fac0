--[[
page.lua: what readers of a course page expect, for any woven lesson.

  Headings  link to their own anchor (a permalink, marked "#").
  Code      an inline code span with - / . : or = keeps each word of up to
            30 characters whole (span.nobr): `nvcc -arch=sm_80` never wraps
            inside "-arch".
  Tables    no column widths; each in a div.table-wrap that scrolls inside
            itself if it must (a div holding only the table, such as
            ::: results-table, becomes the wrapper: data-table-wrap).  With
            5 or more columns, a phone layout for a wrapper under 44rem: at
            most 6 rows of short cells, a transposed aria-hidden copy
            (table-narrow; the original table-wide); else each row a card
            of "header: value" lines (table-cards, data-label).
  Plots     an SVG image NAME.svg beside NAME-narrow.svg is drawn inline as
            a pair (svg.plot-wide, svg.plot-narrow, role="img", labelled by
            the caption; the stylesheet shows one).  The figure names the
            tables of its numbers (aria-describedby, and a link under the
            caption): the ids in numbers="ID ...", else the last
            div.results-table before it.  Any other SVG image stays an <img>
            in a box that scrolls on a phone.
]]

local NOBR_MAX, WIDE_MIN_COLUMNS, NARROW_MAX_ROWS, SHORT_CELL = 30, 5, 6, 16
local function stringify(x)
  -- Text of x, the inline code this filter made raw HTML included.
  return pandoc.utils.stringify(pandoc.walk_block(pandoc.Div(x), {
    RawInline = function(r) return pandoc.Str(r.text:gsub("<[^>]+>", "")) end
  }))
end

local ESC = { ["&"] = "&amp;", ['"'] = "&quot;", ["<"] = "&lt;",
              [">"] = "&gt;" }
local function escape(s) return (s:gsub('[&"<>]', ESC)) end

local function raw(s) return pandoc.RawBlock("html", s) end

local function find_file(name)
  -- Path of name, relative to the working directory or a resource folder.
  for _, d in ipairs({ ".", table.unpack(PANDOC_STATE.resource_path) }) do
    local path = (d == "." or name:sub(1, 1) == "/") and name
                 or d .. "/" .. name
    local f = io.open(path, "rb")
    if f then f:close(); return path end
  end
end

local function Header(h)
  local linked = false
  pandoc.walk_block(pandoc.Plain(h.content),
                    { Link = function() linked = true end })
  if h.identifier == "" or linked then return nil end
  h.content = { pandoc.Link(h.content, "#" .. h.identifier, "",
                            pandoc.Attr("", { "self-link" })) }
  return h
end

local function Code(code)
  if not code.text:find("[-/.:=]") or #code.classes > 0
      or code.identifier ~= "" then return nil end
  local out = code.text:gsub("(%S+)", function(word)
    local short = (utf8.len(word) or NOBR_MAX + 1) <= NOBR_MAX
    word = escape(word)
    return short and '<span class="nobr">' .. word .. "</span>" or word
  end)
  return pandoc.RawInline("html", "<code>" .. out .. "</code>")
end

-- ---- tables ---------------------------------------------------------------

local function grid(tbl)
  -- Header cells and body rows (lists of cells), or nil when a cell spans.
  local head = tbl.head.rows[1]
  if not head then return nil end
  local rows = { head.cells }
  for _, b in ipairs(tbl.bodies) do
    for _, r in ipairs(b.body) do table.insert(rows, r.cells) end
  end
  for _, r in ipairs(rows) do
    if #r ~= #rows[1] then return nil end
    for _, c in ipairs(r) do
      if c.col_span ~= 1 or c.row_span ~= 1 then return nil end
    end
  end
  return table.remove(rows, 1), rows
end

local function transposed(tbl, header, body)
  -- One row per column of tbl, one column per row; tbl's first column
  -- (its row labels, e.g. N) becomes the header row.
  local function row(j, align)
    local cells = { pandoc.Cell(header[j].contents, pandoc.AlignLeft) }
    for _, r in ipairs(body) do
      table.insert(cells, pandoc.Cell(r[j].contents, align))
    end
    return pandoc.Row(cells)
  end
  local rows, specs = {}, { { pandoc.AlignLeft } }
  for j = 2, #header do table.insert(rows, row(j, pandoc.AlignRight)) end
  for _ = 1, #body do table.insert(specs, { pandoc.AlignRight }) end
  return pandoc.Table(tbl.caption, specs, pandoc.TableHead({ row(1,
      pandoc.AlignRight) }), { { attr = pandoc.Attr(), row_head_columns = 1,
      head = {}, body = rows } }, pandoc.TableFoot(),
    pandoc.Attr("", { "table-narrow" }, { ["aria-hidden"] = "true" }))
end

local WRAP_OPEN = '<div class="table-wrap">'

local function Table(tbl)
  for i, spec in ipairs(tbl.colspecs) do tbl.colspecs[i] = { spec[1] } end
  local out = { raw(WRAP_OPEN), tbl }
  local header, body = grid(tbl)
  if header and #header >= WIDE_MIN_COLUMNS and #body >= 1 then
    local short = #body <= NARROW_MAX_ROWS
    for _, r in ipairs(body) do
      for _, c in ipairs(r) do
        short = short and utf8.len(stringify(c.contents)) <= SHORT_CELL
      end
    end
    if short then
      tbl.attr.classes:insert("table-wide")
      table.insert(out, transposed(tbl, header, body))
    else
      tbl.attr.classes:insert("table-cards")
      for _, r in ipairs(body) do
        for j, c in ipairs(r) do
          c.attributes["data-label"] = stringify(header[j].contents)
        end
      end
    end
  end
  table.insert(out, raw("</div>"))
  return out
end

local function wrapper_only(div)
  -- A div holding only one wrapped table becomes the wrapper itself, so
  -- the table stays its first child (filters run children first).
  local c = div.content
  if #c < 3 or c[1].text ~= WRAP_OPEN or c[#c].text ~= "</div>" then return end
  for k = 2, #c - 1 do
    if c[k].t ~= "Table" then return nil end
  end
  div.content = pandoc.List({ table.unpack(c, 2, #c - 1) })
  div.attributes["data-table-wrap"] = ""
  return div
end

-- ---- plots ----------------------------------------------------------------

local function svg_markup(path, class, label)
  -- The <svg> element of a file, ready to sit inside HTML.
  local f = assert(io.open(path, "rb"))
  local text = f:read("a"):gsub("<!%-%-.-%-%->", "")
  f:close()
  local start = text:find("<svg[%s>]")
  if not start then error("page.lua: no <svg> element in " .. path, 0) end
  return (text:sub(start):gsub("^<svg", '<svg class="' .. class ..
    '" role="img" aria-label="' .. escape(label) .. '"', 1):gsub("%s+$", ""))
end

local function figure(img, class, extra, art, tail)
  local blocks = pandoc.List({ raw('<figure class="' .. class .. '"' ..
                                   extra .. ">" .. art) })
  if #img.caption > 0 then
    blocks:extend({ raw('<figcaption aria-hidden="true">'),
                    pandoc.Plain(img.caption), raw("</figcaption>") })
  end
  blocks:insert(raw((tail or "") .. "</figure>"))
  return blocks
end

local last_table, seen, count = nil, {}, 0

local function results_table(div)
  -- Remember the last results table (giving it an id), in document order.
  if div.classes:includes("results-table") then
    if div.identifier == "" then
      count = count + 1
      div.identifier = "results-table-" .. count
    end
    last_table, seen[div.identifier] = div.identifier, true
    return div
  end
end

local function Para(para)
  local img = #para.content == 1 and para.content[1]
  if not img or img.t ~= "Image" or not img.src:match("%.svg$")
      or img.src:match("^%a[%w+.-]*:") then return nil end
  local wide = find_file(img.src)
  local narrow = find_file((img.src:gsub("%.svg$", "-narrow.svg")))
  if not (wide and narrow) then
    return figure(img, "diagram", "", '<div class="figure-scroll"><img src="'
      .. escape(img.src) .. '" alt="' .. escape(stringify(img.caption)) ..
      '"></div>')
  end
  local label, name = stringify(img.caption), img.src:match("([^/]+)%.svg$")
  -- numbers="ID FILE#ID ...": a table on this page, or on another page
  -- (pages.lua writes FILE#ID), which only a link can reach.
  local ids, here = pandoc.List(), pandoc.List()
  for tok in (img.attributes.numbers or last_table or ""):gmatch("%S+") do
    tok = tok:gsub("^#", "")
    ids:insert(tok)
    if not tok:find("#", 1, true) then here:insert(tok) end
  end
  local extra = ' data-plot="' .. escape(name) .. '"' .. (img.identifier ~= ""
    and ' id="' .. escape(img.identifier) .. '"' or "") .. (#here > 0 and
    ' aria-describedby="' .. escape(table.concat(here, " ")) .. '"' or "")
  local links = ids:map(function(id)
    if id:find("#", 1, true) then
      return '<a href="' .. escape(id) .. '">the table on ' ..
        escape(id:match("^[^#]*")) .. "</a>"
    end
    return '<a href="#' .. escape(id) .. '">the table ' ..
      (seen[id] and "above" or "below") .. "</a>"
  end)
  return figure(img, "plot", extra, '<div class="plot-art">\n' ..
    svg_markup(wide, "plot-wide", label) .. "\n" ..
    svg_markup(narrow, "plot-narrow", label) .. "\n</div>",
    #ids > 0 and '<p class="plot-numbers">Its numbers: ' ..
    table.concat(links, ", ") .. "</p>" or nil)
end

local function Figure(fig)
  -- pandoc 3 makes an image alone in its paragraph a Figure (2.x: a Para):
  -- the same figure from its one image, the Figure's id and caption kept.
  local body = #fig.content == 1 and fig.content[1]
  local img = body and (body.t == "Plain" or body.t == "Para")
    and #body.content == 1 and body.content[1]
  if not img or img.t ~= "Image" then return nil end
  if img.identifier == "" then img.identifier = fig.identifier end
  if #img.caption == 0 and fig.caption.long[1] then
    img.caption = pandoc.utils.blocks_to_inlines(fig.caption.long)
  end
  return Para(pandoc.Para({ img }))
end

-- Results tables and figures in document order, then everything else.
return {
  { traverse = "topdown", Div = results_table, Para = Para, Figure = Figure },
  { Header = Header, Code = Code, Table = Table, Div = wrapper_only },
}
