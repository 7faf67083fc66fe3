/* tools/view_page.h - the page of "hwt view" (view_page.c). */
#ifndef HWT_TOOLS_VIEW_PAGE_H
#define HWT_TOOLS_VIEW_PAGE_H

extern const char view_page_html[];

#endif
